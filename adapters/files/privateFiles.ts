/**
 * The daemon's own files in its data dir: created or written readable and writable by their
 * owner only (0600), written whole (a temporary file renamed, so a reader or a crash never sees
 * half of one), and read only when they are regular files (no link followed, no FIFO waited on).
 */
import {
  closeSync,
  existsSync,
  fchmodSync,
  fstatSync,
  fsyncSync,
  lstatSync,
  openSync,
  readSync,
  renameSync,
  rmSync,
  statSync,
  writeSync,
  constants,
} from 'node:fs';

/** Creates an empty file readable and writable by its owner only (0600), unless it exists. Never opens an existing file. */
export const createPrivateFile = (path: string): void => {
  if (existsSync(path)) return;
  try {
    closeSync(openSync(path, 'wx', 0o600)); // 'wx': a file that appeared meanwhile is left alone
  } catch (error) {
    if ((error as { code?: string }).code !== 'EEXIST') throw error;
  }
};

/**
 * Writes `bytes` as the whole of `path`, 0600, through a temporary file renamed over it. The
 * temporary is made afresh (whatever lay at its name removed, never followed: a link put there
 * cannot turn the write onto another file) and on disk before the rename.
 */
export const writePrivateFile = (path: string, bytes: string | Uint8Array): void => {
  const temporary = `${path}.${process.pid}.tmp`;
  const data = typeof bytes === 'string' ? Buffer.from(bytes) : bytes;
  try {
    rmSync(temporary, { force: true });
    const fd = openSync(temporary, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW, 0o600);
    try {
      fchmodSync(fd, 0o600);
      for (let written = 0; written < data.length; ) written += writeSync(fd, data, written, data.length - written);
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    renameSync(temporary, path);
  } finally {
    rmSync(temporary, { force: true });
  }
};

/**
 * The whole of `path` when it is a regular file; a sentence saying why not when something else
 * is there (a link, a FIFO, a device, a folder); undefined when nothing is. `followLinks`: a
 * link to a regular file is read (a model directory's files often are links), a link to
 * anything else is refused all the same.
 */
export const readRegularFile = (path: string, { followLinks = false } = {}): Buffer | string | undefined => {
  let stat: ReturnType<typeof lstatSync>;
  try {
    stat = followLinks ? statSync(path) : lstatSync(path);
  } catch {
    return undefined;
  }
  if (!stat.isFile()) return `${path} is not a regular file`;
  // Non-blocking: a FIFO put in the file's place after the look above fails the fstat, never hangs the open.
  const fd = openSync(path, constants.O_RDONLY | (followLinks ? 0 : constants.O_NOFOLLOW) | constants.O_NONBLOCK);
  try {
    const opened = fstatSync(fd);
    if (!opened.isFile()) return `${path} is not a regular file`;
    const size = opened.size;
    const buffer = Buffer.allocUnsafe(size);
    for (let read = 0; read < size; ) {
      const n = readSync(fd, buffer, read, size - read, read);
      if (n === 0) return `${path} shrank while it was read`;
      read += n;
    }
    return buffer;
  } finally {
    closeSync(fd);
  }
};

/** What is said of a file a person put in place that is there but not a regular file. */
export const NOT_READ_HERE = 'a folder, a FIFO or a device is not read';

/**
 * A file a person puts in place (settings, a persona, a model's config): its bytes, undefined
 * when there is none; a link to a regular file is followed, and anything else there is refused
 * with the error `refuse` makes of why.
 */
export const readPlacedFile = (path: string, refuse: (why: string) => Error): Buffer | undefined => {
  const read = readRegularFile(path, { followLinks: true });
  if (typeof read === 'string') throw refuse(`${read} (${NOT_READ_HERE})`);
  return read;
};
