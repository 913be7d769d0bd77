/**
 * The daemon's own files (the vault, settings, the log, the memory's caches), which the files
 * tools never touch, whatever their roots: judged on the path a call will really open (after
 * `confinePath` resolved it, so a directory swapped for a link after the security proxy looked
 * cannot lead there), and by inode, so a hard link to one of them inside a root is refused too.
 */
import { realpathSync } from 'node:fs';
import { stat } from 'node:fs/promises';
import type { ConfinedPath } from './confinePath.ts';
import { isInside } from './confinePath.ts';
import { FileOperationFailed } from './errors.ts';

const DAEMON_FILE = "is the daemon's own (its vault, settings, log or caches), which no tool may touch";
const HINT = 'name a file of your own';

/** The paths as they resolve now (one that does not exist yet is kept as given). */
export const resolvedDaemonFiles = (paths: readonly string[]): readonly string[] =>
  paths.map((path) => {
    try {
      return realpathSync(path);
    } catch {
      return path;
    }
  });

/** @throws FileOperationFailed when `confined` is, or is inside, or is a hard link to, one of `daemonFiles`. */
export const refuseDaemonFiles = async (confined: ConfinedPath, daemonFiles: readonly string[]): Promise<ConfinedPath> => {
  if (daemonFiles.some((file) => isInside(file, confined.real))) throw new FileOperationFailed(confined.lexical, DAEMON_FILE, HINT);
  const target = await stat(confined.real).catch(() => null);
  if (target === null || target.nlink < 2) return confined;
  for (const file of daemonFiles) {
    const own = await stat(file).catch(() => null);
    if (own && own.dev === target.dev && own.ino === target.ino) {
      throw new FileOperationFailed(confined.lexical, `is a hard link to a file that ${DAEMON_FILE}`, HINT);
    }
  }
  return confined;
};
