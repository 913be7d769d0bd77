/** The security firewall's pure rules: tool policy. */
export * from './toolPolicy.ts';
