/**
 * Every refusal of the file system, as a typed error naming the path and what to do. Promise: no
 * errno text, syscall name or stack reaches the model; an unknown errno still becomes a
 * FileOperationFailed that names its code.
 */
import { errnoCode, HologramError } from '../../../events/index.ts';
import { FileOperationFailed } from './errors.ts';

const HINTS: Readonly<Record<string, readonly [string, string]>> = {
  ENOENT: ['does not exist', 'check the name with files_list'],
  EISDIR: ['is a directory', 'use files_list to see what it holds'],
  ENOTDIR: ['has a file where a directory was expected on the way', 'check the path with files_list'],
  EACCES: ['is not accessible to the daemon (permission denied)', 'pick another path or fix its permissions'],
  EPERM: ['is not accessible to the daemon (operation not permitted)', 'pick another path or fix its permissions'],
  ELOOP: ['goes through a symlink loop (or too many symlinks in a row)', 'use a path without the looping symlink'],
  ENAMETOOLONG: ['is too long for the file system (at most 255 bytes per name and 4,095 for the whole path)', 'use a shorter name'],
  ENXIO: ['is a socket or a device with nothing behind it, not a regular file', 'pick another path'],
  ENODEV: ['is a device, not a regular file', 'pick another path'],
  ENOSPC: ['could not be written: the disk is full', 'free some space and retry'],
  EDQUOT: ['could not be written: the disk quota is used up', 'free some space and retry'],
  EROFS: ['is on a read-only file system', 'write somewhere else'],
  EEXIST: ['already exists as something else', 'pick another name'],
  EBUSY: ['is busy (in use by the system)', 'try again later or pick another path'],
  ETXTBSY: ['is a program that is running and cannot be written', 'write somewhere else'],
  EMFILE: ['could not be opened: the daemon has too many files open', 'try again in a moment'],
  ENFILE: ['could not be opened: the system has too many files open', 'try again in a moment'],
  EIO: ['could not be read or written: the device reported an I/O error', 'check the disk'],
  EFBIG: ['would grow larger than the file system allows', 'write a smaller file'],
  EINVAL: ['is not a valid name for this file system', 'use another name'],
};

/** The typed refusal for a file-system error, or undefined when `error` is not one (a programming error). */
export const refusalFor = (shownPath: string, error: unknown): HologramError | undefined => {
  if (error instanceof HologramError) return error;
  const code = errnoCode(error);
  if (code === undefined) return undefined;
  const hint = HINTS[code];
  if (hint === undefined)
    return new FileOperationFailed(shownPath, `could not be used (the file system said ${code})`, 'pick another path', code);
  return new FileOperationFailed(shownPath, hint[0], hint[1], code);
};

/** Runs `run`, turning a file-system refusal into its typed error; anything else passes through. */
export const explained = async <T>(shownPath: string, run: () => Promise<T>): Promise<T> => {
  try {
    return await run();
  } catch (error) {
    throw refusalFor(shownPath, error) ?? error;
  }
};
