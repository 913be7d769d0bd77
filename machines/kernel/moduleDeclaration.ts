/**
 * What a kernel module declares: the facilities it needs ready, the ones it produces, and the
 * ones it guards (wraps as they are produced: their providers start after it, and every reader
 * gets the wrapped facility).
 */
export type ModuleDeclaration = Readonly<{
  name: string;
  requires: readonly string[];
  provides: readonly string[];
  guards?: readonly string[];
}>;
