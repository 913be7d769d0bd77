/** The security firewall's pure rules: tool policy by principal, the sandbox, content review, secret aliases. */
export * from './principals.ts';
export * from './toolPolicy.ts';
export * from './sandbox.ts';
export * from './contentReview.ts';
export * from './secretFill.ts';
export * from './stringFinder.ts';
export * from './wrappedLines.ts';
