/**
 * The daemon's own paths (the vault, settings, the log, its state and plugins: the data dir but
 * the roots inside it), which the files tools never touch, whatever their roots: judged on the
 * path a call will really open (after `confinePath` resolved it, so a directory swapped for a link
 * after the security proxy looked cannot lead there), and by inode, so a hard link to one of the
 * daemon's files inside a root is refused too.
 */
import { lstat, readdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { type DaemonPaths, daemonPathOf } from '../../../actors/index.ts';
import type { ConfinedPath } from './confinePath.ts';
import { FileOperationFailed } from './errors.ts';

const DAEMON_FILE = "is the daemon's own (its vault, settings, log, state or plugins), which no tool may touch";
const HINT = 'name a file of your own';
/** How many of the daemon's entries a hard link is compared with at most; past that it is refused as unchecked. */
const DAEMON_ENTRIES_CHECKED = 5_000;

/**
 * Whether a file of the daemon's (under its paths, not in a folder open to tools) has inode
 * `ino` on `dev`; undefined when there were more entries than are checked.
 */
const daemonHolds = async (daemon: DaemonPaths, dev: number, ino: number): Promise<boolean | undefined> => {
  const folders = [...daemon.protectedPaths, ...(daemon.dataDir === undefined ? [] : [daemon.dataDir])];
  const seen = new Set<string>();
  let entries = 0;
  while (folders.length > 0) {
    const path = folders.pop()!;
    if (seen.has(path) || daemonPathOf(path, daemon) === undefined) continue;
    seen.add(path);
    if (++entries > DAEMON_ENTRIES_CHECKED) return undefined;
    const info = await lstat(path).catch(() => null);
    if (info === null) continue;
    if (info.dev === dev && info.ino === ino) return true;
    if (info.isDirectory()) for (const name of await readdir(path).catch(() => [])) folders.push(join(path, name));
  }
  return false;
};

/** @throws FileOperationFailed when `confined` is one of the daemon's paths, or a hard link to one of its files. */
export const refuseDaemonFiles = async (confined: ConfinedPath, daemon: DaemonPaths): Promise<ConfinedPath> => {
  if (daemonPathOf(confined.real, daemon) !== undefined) throw new FileOperationFailed(confined.lexical, DAEMON_FILE, HINT);
  const target = await stat(confined.real).catch(() => null);
  if (target === null || target.nlink < 2) return confined;
  const held = await daemonHolds(daemon, target.dev, target.ino);
  if (held === false) return confined;
  throw new FileOperationFailed(
    confined.lexical,
    held
      ? `is a hard link to a file that ${DAEMON_FILE}`
      : 'is a hard link, and the daemon holds too many files to tell whether it leads to one of them',
    HINT,
  );
};
