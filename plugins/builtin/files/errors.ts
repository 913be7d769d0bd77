/** Typed refusals of the files plugin; each reaches the model as a tool result with isError. */
import { HologramError } from '../../../events/index.ts';

const listRoots = (roots: readonly string[]): string => roots.map((root) => `'${root}'`).join(', ');

/** A path that resolves (lexically or through a symlink) outside every configured root. */
export class PathOutsideRoots extends HologramError {
  readonly code = 'PATH_OUTSIDE_ROOTS';
  constructor(
    readonly requested: string,
    readonly roots: readonly string[],
    readonly reason: string,
  ) {
    super(
      `path '${requested}' ${reason}, outside the allowed roots ${listRoots(roots)}; ` +
        `use a path relative to '${roots[0] ?? '(none)'}' or an absolute path inside one of the roots ` +
        `(roots are set by the plugins.files.roots setting)`,
    );
  }
}

/** A tool argument of the wrong type or shape. */
export class InvalidFilesArgument extends HologramError {
  readonly code = 'INVALID_FILES_ARGUMENT';
  constructor(
    readonly tool: string,
    readonly field: string,
    readonly expected: string,
  ) {
    super(`${tool}: argument '${field}' should be ${expected}; call ${tool} again with a valid '${field}'`);
  }
}

/** The plugins.files.roots setting is not a non-empty array of path strings. */
export class InvalidFilesRoots extends HologramError {
  readonly code = 'INVALID_FILES_ROOTS';
  constructor(readonly got: unknown) {
    super(
      `setting plugins.files.roots should be a non-empty array of paths (absolute, or relative to the data dir) ` +
        `but is ${JSON.stringify(got)}; fix it in settings.json or remove it to use <dataDir>/files`,
    );
  }
}

/** A file operation the file system refused (missing file, a directory where a file was expected, ...). */
export class FileOperationFailed extends HologramError {
  readonly code = 'FILE_OPERATION_FAILED';
  constructor(
    readonly path: string,
    readonly what: string,
    readonly hint: string,
  ) {
    super(`'${path}' ${what}; ${hint}`);
  }
}
