/**
 * Confinement of a requested path to the configured roots. Promise: a path this returns lies
 * inside some root both lexically and after every symlink is resolved (through the deepest
 * existing ancestor, and through a dangling symlink at any step), so reading or writing it
 * never touches a file outside the roots at the time of the check.
 */
import { errnoCode } from '../../../events/index.ts';
import { realpath, readlink } from 'node:fs/promises';
import { basename, dirname, isAbsolute, join, relative, resolve, sep } from 'node:path';
import { FileOperationFailed, PathOutsideRoots } from './errors.ts';
import { explained } from './fsRefusals.ts';

/** Symlinks followed while resolving one path before giving up (Linux uses 40 too). */
const MAX_LINK_HOPS = 40;
/** Linux's NAME_MAX and PATH_MAX - 1, in bytes: longer names fail every call, so they are refused up front. */
const MAX_NAME_BYTES = 255;
const MAX_PATH_BYTES = 4095;

export type ConfinedPath = Readonly<{
  /** The path as the model named it, made absolute (for messages). */
  lexical: string;
  /** The same path with every symlink resolved: the one to operate on. */
  real: string;
  /** The root `real` lies in, resolved: where `openUnderRoot` starts its walk. */
  root: string;
}>;

/** True when `path` is `root` or below it (both absolute and normalized). */
export const isInside = (root: string, path: string): boolean => {
  const rel = relative(root, path);
  return rel === '' || (rel !== '..' && !rel.startsWith(`..${sep}`) && !isAbsolute(rel));
};

/**
 * `realpath` that also works for a path that does not exist yet: the deepest existing ancestor
 * is resolved and the missing rest appended. A dangling symlink on the way is followed to
 * where it points, since creating the file would create it there.
 */
export const realpathDeep = async (path: string, hops = 0): Promise<string> => {
  try {
    return await realpath(path);
  } catch (error) {
    const code = errnoCode(error);
    if (code !== 'ENOENT' && code !== 'ENOTDIR') throw error;
  }
  const parent = dirname(path);
  if (parent === path) return path;
  const realParent = await realpathDeep(parent, hops);
  const candidate = join(realParent, basename(path));
  const target = await readlink(candidate).catch(() => null);
  if (target === null) return candidate;
  // A loop of dangling links: the caller names the path it was asked for (see fsRefusals).
  if (hops >= MAX_LINK_HOPS) throw Object.assign(new Error('too many symlinks'), { code: 'ELOOP' });
  return realpathDeep(resolve(realParent, target), hops + 1);
};

/**
 * Resolves `requested` against the roots: a relative path against the first root, an absolute
 * one as is. Throws `PathOutsideRoots` when it escapes them, by `..`, by being elsewhere, or
 * through a symlink.
 *
 * @example
 * const { real } = await confinePath('notes/today.md', ['/data/files']);
 */
export const confinePath = async (requested: string, roots: readonly string[]): Promise<ConfinedPath> => {
  const absoluteRoots = roots.map((root) => resolve(root));
  const first = absoluteRoots[0];
  if (first === undefined) throw new PathOutsideRoots(requested, roots, 'cannot be placed: no root is configured');
  if (requested.includes('\0')) throw new PathOutsideRoots(requested, roots, 'contains a NUL byte and so names no file');

  const lexical = isAbsolute(requested) ? resolve(requested) : resolve(first, requested);
  if (!absoluteRoots.some((root) => isInside(root, lexical))) {
    throw new PathOutsideRoots(requested, roots, isAbsolute(requested) ? 'is an absolute path' : `climbs out with '..' to '${lexical}'`);
  }

  refuseLongNames(requested, lexical);

  const real = await explained(requested, () => realpathDeep(lexical));
  const realRoots = await Promise.all(absoluteRoots.map((root) => explained(root, () => realpathDeep(root))));
  const root = realRoots.find((candidate) => isInside(candidate, real));
  if (root === undefined) throw new PathOutsideRoots(requested, roots, `goes through a symlink to '${real}'`);
  return { lexical, real, root };
};

/** A name or path the file system would refuse with ENAMETOOLONG, refused here with the numbers. */
const refuseLongNames = (requested: string, lexical: string): void => {
  const long = lexical.split(sep).find((name) => Buffer.byteLength(name) > MAX_NAME_BYTES);
  if (long !== undefined) {
    throw new FileOperationFailed(
      requested,
      // The path is quoted whole already: a piece of one name cut from it could be part of a filled secret, which the scrub would miss.
      `has a name of ${Buffer.byteLength(long)} bytes, longer than the ${MAX_NAME_BYTES} bytes a file system allows`,
      'use a shorter name',
      'ENAMETOOLONG',
    );
  }
  const bytes = Buffer.byteLength(lexical);
  if (bytes > MAX_PATH_BYTES) {
    throw new FileOperationFailed(
      requested,
      `is ${bytes} bytes long once made absolute, longer than the ${MAX_PATH_BYTES} bytes a path may have`,
      'use a shorter path',
      'ENAMETOOLONG',
    );
  }
};
