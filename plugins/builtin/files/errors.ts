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
    /** The file system's error code (ENOENT, ELOOP, ...) when it was the one refusing. */
    readonly errno?: string,
  ) {
    super(`'${path}' ${what}; ${hint}`);
  }
}

/** A FIFO, socket, device (or a directory where a file was wanted, and back): refused before anything is read from it. */
export class NotARegularFile extends HologramError {
  readonly code = 'NOT_A_REGULAR_FILE';
  constructor(
    readonly path: string,
    /** What it is instead: 'a FIFO', 'a socket', 'a character device', ... */
    readonly kind: string,
    readonly wanted: 'a regular file' | 'a directory',
    hint = kind === 'a directory'
      ? 'use files_list to see what it holds'
      : kind === 'a regular file'
        ? 'read it with files_read'
        : 'the files tools read and write regular files only; pick another path',
  ) {
    super(`'${path}' is ${kind}, not ${wanted}; ${hint}`);
  }
}

/** A path component turned into a symlink (or was replaced) between the check and the open: nothing was read or written. */
export class PathChangedWhileOpening extends HologramError {
  readonly code = 'PATH_CHANGED_WHILE_OPENING';
  constructor(
    readonly path: string,
    /** The component that changed. */
    readonly component: string,
  ) {
    super(
      `'${path}' changed while it was being opened ('${component}' is now a symlink or no longer a directory); ` +
        `nothing was read or written: call the tool again`,
    );
  }
}
