/** What a stat result is, in words for a refusal ("a FIFO", "a socket", ...). Pure. */
import type { Stats } from 'node:fs';

/** The kind with its article, for messages. */
export const describeKind = (stats: Stats): string => {
  if (stats.isFile()) return 'a regular file';
  if (stats.isDirectory()) return 'a directory';
  if (stats.isFIFO()) return 'a FIFO';
  if (stats.isSocket()) return 'a socket';
  if (stats.isCharacterDevice()) return 'a character device';
  if (stats.isBlockDevice()) return 'a block device';
  if (stats.isSymbolicLink()) return 'a symlink';
  return 'a special file';
};
