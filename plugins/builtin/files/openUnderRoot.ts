/**
 * Opening a checked path so that what is opened is what was checked. Promise (Linux): the path is
 * walked from its root one component at a time, each opened with O_NOFOLLOW under the handle of
 * its parent (through /proc/self/fd/N, Linux's openat), so a component swapped for a symlink
 * after `confinePath` looked at it fails the walk instead of leading outside the root. The last
 * component is looked at before it is opened (a FIFO, socket or device is refused unopened) and
 * opened O_NONBLOCK, then its handle is checked again, so nothing ever blocks on a special file.
 *
 * Elsewhere (no /proc) the walk still opens every component with O_NOFOLLOW, by full path, which
 * narrows the race to the moment between two components' opens.
 */
import { errnoCode } from '../../../events/index.ts';
import { constants, existsSync, type Stats } from 'node:fs';
import { lstat, mkdir, open, type FileHandle } from 'node:fs/promises';
import { join, relative, sep } from 'node:path';
import { NotARegularFile, PathChangedWhileOpening } from './errors.ts';
import { describeKind } from './fileKind.ts';

const { O_RDONLY, O_DIRECTORY, O_NOFOLLOW, O_NONBLOCK, O_NOCTTY } = constants;
const DIR_FLAGS = O_RDONLY | O_DIRECTORY | O_NOFOLLOW;
const FILE_FLAGS = O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY;

const PROC_FD = existsSync('/proc/self/fd');

/** An open directory and the path that reaches it: through its handle on Linux, else its real path. */
export type DirHandle = Readonly<{ handle: FileHandle; path: string }>;

/** The path of `name` inside the directory `dir` holds open. */
export const inside = (dir: DirHandle, name: string): string => join(dir.path, name);

const asDirHandle = (handle: FileHandle, realPath: string): DirHandle => ({
  handle,
  path: PROC_FD ? `/proc/self/fd/${handle.fd}` : realPath,
});

/** Opens `name` under `dir` as a directory, refusing a symlink; `create` makes it when missing. */
const openChildDir = async (dir: DirHandle, name: string, realPath: string, shownPath: string, create: boolean) => {
  const path = inside(dir, name);
  if (create) {
    await mkdir(path).catch((error: unknown) => {
      if (errnoCode(error) !== 'EEXIST') throw error;
    });
  }
  try {
    return asDirHandle(await open(path, DIR_FLAGS), realPath);
  } catch (error) {
    const code = errnoCode(error);
    if (code === 'ELOOP' || code === 'ENOTDIR') {
      const now = await lstat(path).catch(() => null);
      if (now?.isSymbolicLink()) throw new PathChangedWhileOpening(shownPath, name);
    }
    throw error;
  }
};

/**
 * Opens the directory `real` (inside the resolved root `root`), component by component.
 * The caller closes `handle`.
 */
export const openDirUnderRoot = async (
  root: string,
  real: string,
  shownPath: string,
  options: { create?: boolean } = {},
): Promise<DirHandle> => {
  const names = relative(root, real).split(sep).filter(Boolean);
  let dir = asDirHandle(await open(root, O_RDONLY | O_DIRECTORY), root);
  let realPath = root;
  try {
    for (const name of names) {
      realPath = join(realPath, name);
      const child = await openChildDir(dir, name, realPath, shownPath, options.create ?? false);
      await dir.handle.close();
      dir = child;
    }
    return dir;
  } catch (error) {
    await dir.handle.close();
    throw error;
  }
};

/** Refuses anything but a regular file. */
export const requireRegularFile = (stats: Stats, shownPath: string): void => {
  if (stats.isSymbolicLink()) throw new PathChangedWhileOpening(shownPath, shownPath);
  if (!stats.isFile()) throw new NotARegularFile(shownPath, describeKind(stats), 'a regular file');
};

/**
 * Opens `name` in `dir` for reading as a regular file: looked at first (a special file is refused
 * unopened), opened O_NOFOLLOW | O_NONBLOCK, and its handle checked again. The caller closes it.
 */
export const openFileIn = async (dir: DirHandle, name: string, shownPath: string): Promise<{ handle: FileHandle; stats: Stats }> => {
  const path = inside(dir, name);
  requireRegularFile(await lstat(path), shownPath);
  const handle = await open(path, FILE_FLAGS).catch(async (error: unknown) => {
    if (errnoCode(error) === 'ELOOP') throw new PathChangedWhileOpening(shownPath, name);
    throw error;
  });
  try {
    const stats = await handle.stat();
    requireRegularFile(stats, shownPath);
    return { handle, stats };
  } catch (error) {
    await handle.close();
    throw error;
  }
};

/** Opens the regular file `real` (inside the resolved root `root`) for reading. The caller closes `handle`. */
export const openFileUnderRoot = async (root: string, real: string, shownPath: string): Promise<{ handle: FileHandle; stats: Stats }> => {
  const names = relative(root, real).split(sep).filter(Boolean);
  const last = names.pop();
  if (last === undefined) throw new NotARegularFile(shownPath, 'a directory (a root)', 'a regular file');
  const dir = await openDirUnderRoot(root, join(root, ...names), shownPath);
  try {
    return await openFileIn(dir, last, shownPath);
  } finally {
    await dir.handle.close();
  }
};
