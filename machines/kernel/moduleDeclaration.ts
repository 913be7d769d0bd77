/** What a kernel module declares: the facilities it needs ready and the ones it produces. */
export type ModuleDeclaration = Readonly<{
  name: string;
  requires: readonly string[];
  provides: readonly string[];
}>;
