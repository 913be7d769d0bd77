/**
 * How much a subprocess plugin may keep in its state folder, the one folder of the disk it may
 * write: without a bound, a plugin filled the disk the data dir is on, and the daemon could then
 * append nothing. The kernel bounds each file it writes (`prlimit --fsize` in its sandbox); the
 * host bounds the folder as a whole, before each start and every STATE_CHECK_MS from its spawn,
 * and stops a plugin over it. Counted as the disk counts it (allocated blocks, each file once
 * however many links it has, folders included), files it removed but holds open or mapped included, and in
 * entries too, so a plugin cannot fill the disk with empty files or make the count slow. A folder
 * that cannot be measured (made unreadable, paths past the system's length, descriptors it will
 * not show) counts as full: what the host cannot see, it cannot bound. What a count cannot see at
 * all (a removed file a plugin passes to itself over a socket) the disk's reserve
 * bounds (`diskReserve.ts`): below it, plugins are stopped, which frees what they held.
 */
import { lstat, readdir, readFile, readlink, stat } from 'node:fs/promises';
import { join, relative } from 'node:path';
import type { Timers } from '../../events/index.ts';
import { freeBytesOn } from '../../actors/index.ts';
import { errnoCode, HologramError } from '../../events/index.ts';
import { processTree } from './processTable.ts';

const MB = 1024 * 1024;
export const DEFAULT_PLUGIN_STATE_MB = 1024;
/** The most files and folders a state folder may hold, whatever their size. */
export const STATE_ENTRIES_AT_MOST = 100_000;
/** How often a running plugin's state folder is measured, at least (the next count is armed once one ends). */
export const STATE_CHECK_MS = 2_000;
/** A count that took long waits this many times as long before the next, so a folder of many files costs a share of a core, not all of it. */
const CHECK_BACKOFF = 5;
/** The most open files of a plugin's processes a count looks through, by default; a plugin holding more counts as full. */
const OPEN_FILES_LOOKED_AT_MOST = 20_000;
export const DEFAULT_DISK_RESERVE_MB = 256;

/**
 * `bytes` and `entries` the folder may hold; `openFiles`, the most open files of its processes a
 * count looks through; `reserveBytes`, what the disk it is on must keep free.
 */
export type StateQuota = Readonly<{ bytes: number; entries: number; openFiles: number; reserveBytes: number }>;

export const stateQuotaOf = ({
  megabytes,
  reserveMegabytes = DEFAULT_DISK_RESERVE_MB,
  entries = STATE_ENTRIES_AT_MOST,
  openFiles = OPEN_FILES_LOOKED_AT_MOST,
}: Readonly<{ megabytes: number; reserveMegabytes?: number; entries?: number; openFiles?: number }>): StateQuota => ({
  bytes: megabytes * MB,
  entries,
  openFiles,
  reserveBytes: reserveMegabytes * MB,
});

/**
 * What a state folder holds, as far as it was counted (counting stops once past either bound);
 * `unmeasured`, why part of it could not be counted.
 */
export type StateUsage = Readonly<{
  bytes: number;
  entries: number;
  unmeasured?: string;
  /** Of `bytes`, what its processes removed from it but hold (open, or mapped into memory): what stopping them frees. */
  held?: number;
}>;

/** How much of a path an unmeasured folder's reason quotes (a plugin makes them as long as the system allows). */
const PATH_QUOTED = 120;

/** Why `usage` is over `quota`, said to the owner, or undefined when it is within. */
export const overQuota = (usage: StateUsage, quota: StateQuota): string | undefined => {
  if (usage.unmeasured !== undefined) return `its state folder could not be measured (${usage.unmeasured}), so it counts as full`;
  if (usage.bytes > quota.bytes) {
    return `its state folder holds more than ${quota.bytes / MB} MB (security.sandbox.pluginStateMb)`;
  }
  if (usage.entries > quota.entries) return `its state folder holds more than ${quota.entries} files and folders`;
  return undefined;
};

const codeOf = (error: unknown): string => errnoCode(error) ?? String(error);

/** A file or folder gone while it was counted (the plugin removing it) counts as nothing. */
const gone = (error: unknown): boolean => ['ENOENT', 'ENOTDIR'].includes(codeOf(error));

/** Where in `folder` something could not be counted, and why, quoted short. */
const unmeasuredAt = (folder: string, path: string, error: unknown): string => {
  const inside = relative(folder, path) || '.';
  const quoted = inside.length > PATH_QUOTED ? `${inside.slice(0, PATH_QUOTED)}…` : inside;
  return `${codeOf(error)} at ${quoted}`;
};

/** A running count: bytes and entries so far, of them what is held removed, and the files counted already (by device and inode). */
type Count = { bytes: number; entries: number; held: number; readonly files: Set<string> };

/** Adds a file's blocks once however many names (or descriptors, or mappings) lead to it; `held`, one removed but held. */
const addFile = (count: Count, info: Readonly<{ dev: number; ino: number; blocks: number }>, held = false): void => {
  const key = `${info.dev}:${info.ino}`;
  if (count.files.has(key)) return;
  count.files.add(key);
  count.bytes += info.blocks * 512;
  if (held) count.held += info.blocks * 512;
};

/** A line of /proc/PID/maps: its range, device (hex major:minor), inode and path. */
const MAPPING = /^([0-9a-f]+)-([0-9a-f]+) \S+ \S+ (\S+) (\d+)\s+(.*)$/;

/**
 * The files in `folder` that process `pid` removed and holds only as memory mappings (its
 * descriptors closed: a red team's plugin hid 100 MB so and gave it back as another was
 * stopped), added to `count`. Measured through /proc/PID/map_files where homed may read it;
 * elsewhere each file counts as much as its largest mapping.
 */
const addMappedRemoved = async (prefix: string, pid: number, count: Count): Promise<void> => {
  const maps = await readFile(`/proc/${pid}/maps`, 'utf8');
  const unstatted = new Map<string, number>();
  for (const line of maps.split('\n')) {
    const mapping = MAPPING.exec(line);
    if (!mapping || !mapping[5]!.startsWith(prefix) || !mapping[5]!.endsWith(' (deleted)')) continue;
    const [, start, end, device, inode] = mapping;
    try {
      addFile(count, await stat(`/proc/${pid}/map_files/${start}-${end}`), true);
    } catch {
      const key = `${device}:${inode}`;
      unstatted.set(key, Math.max(unstatted.get(key) ?? 0, Number.parseInt(end!, 16) - Number.parseInt(start!, 16)));
    }
  }
  for (const [key, bytes] of unstatted) {
    if (count.files.has(`maps ${key}`)) continue;
    count.files.add(`maps ${key}`);
    count.bytes += bytes;
    count.held += bytes;
  }
};

/**
 * The files in `folder` that the processes `holders` removed but hold open (the disk keeps them
 * until they are closed), added to `count`. A process gone meanwhile is passed over.
 */
const addRemovedButOpen = async (
  folder: string,
  holders: readonly number[],
  count: Count,
  openFiles: number,
): Promise<string | undefined> => {
  const prefix = `${folder}/`;
  let looked = 0;
  for (const pid of holders) {
    let fds: string[];
    try {
      fds = await readdir(`/proc/${pid}/fd`);
    } catch (error) {
      // Gone meanwhile; one that made its descriptors unreadable (not dumpable) holds what cannot be seen.
      if (codeOf(error) === 'ENOENT') continue;
      return `${codeOf(error)} at the open files of its process ${pid}`;
    }
    looked += fds.length;
    if (looked > openFiles) return `its processes hold more than ${openFiles} open files`;
    for (const fd of fds) {
      const path = `/proc/${pid}/fd/${fd}`;
      try {
        const target = await readlink(path);
        if (target.startsWith(prefix) && target.endsWith(' (deleted)')) addFile(count, await stat(path), true);
      } catch {
        // closed meanwhile, or the process is gone
      }
    }
    try {
      await addMappedRemoved(prefix, pid, count);
    } catch (error) {
      if (codeOf(error) === 'ENOENT' || codeOf(error) === 'ESRCH') continue;
      return `${codeOf(error)} at the memory mappings of its process ${pid}`;
    }
  }
  return undefined;
};

/**
 * What `folder` holds, never following a link, folder after folder, and what the processes
 * `holders` removed from it but hold open; stops once past `quota` (the counts then say only
 * that), or at the first part that cannot be read.
 */
export const stateUsage = async (folder: string, quota: StateQuota, holders: readonly number[] = []): Promise<StateUsage> => {
  const count: Count = { bytes: 0, entries: 0, held: 0, files: new Set() };
  const over = (): boolean => count.bytes > quota.bytes || count.entries > quota.entries;
  const folders = [folder];
  for (let next = folders.pop(); next !== undefined; next = folders.pop()) {
    let names: string[];
    try {
      names = await readdir(next);
    } catch (error) {
      if (gone(error)) continue;
      return { ...count, unmeasured: unmeasuredAt(folder, next, error) };
    }
    count.entries += names.length;
    if (over()) return count;
    for (const name of names) {
      const path = join(next, name);
      try {
        const info = await lstat(path);
        if (info.isDirectory()) {
          count.bytes += info.blocks * 512;
          folders.push(path);
        } else addFile(count, info);
      } catch (error) {
        if (!gone(error)) return { ...count, unmeasured: unmeasuredAt(folder, path, error) };
      }
      if (over()) return count;
    }
  }
  const unmeasured = await addRemovedButOpen(folder, holders, count, quota.openFiles);
  return unmeasured === undefined ? count : { ...count, unmeasured };
};

/**
 * Why the disk `folder` is on is too full for plugins to write there, or undefined: what a plugin
 * hides from a count (a removed file it passes to itself over a socket) still takes the
 * disk, and the log is on it too. Stopping the plugin frees what it hid.
 */
export const diskShort = async (folder: string, quota: StateQuota): Promise<string | undefined> => {
  let free: number;
  try {
    free = await freeBytesOn(folder);
  } catch (error) {
    return `the disk of its state folder could not be measured (${codeOf(error)}), so it counts as full`;
  }
  return free < quota.reserveBytes
    ? `the disk its state folder is on has less than ${quota.reserveBytes / MB} MB free (security.sandbox.diskReserveMb), ` +
        'kept for the log: plugins writing there are stopped while it has less'
    : undefined;
};

/** A plugin whose state folder is over its quota, or whose disk is short of the reserve, before it starts. */
export class PluginStateOverQuota extends HologramError {
  readonly code = 'PLUGIN_STATE_OVER_QUOTA';
  constructor(plugin: string, folder: string, why: string, fix: string) {
    super(`plugin '${plugin}' was not started: ${why}, ${folder}; ${fix}`);
  }
}

/** @throws PluginStateOverQuota when `folder` holds more than `quota`, cannot be measured, or its disk is short of the reserve. */
export const checkStateQuota = async (plugin: string, folder: string, quota: StateQuota): Promise<void> => {
  const short = await diskShort(folder, quota);
  if (short !== undefined) {
    throw new PluginStateOverQuota(
      plugin,
      folder,
      short,
      'free room on that disk (or lower security.sandbox.diskReserveMb in settings.json and restart homed)',
    );
  }
  const usage = await stateUsage(folder, quota);
  const why = overQuota(usage, quota);
  if (why !== undefined) throw new PluginStateOverQuota(plugin, folder, why, fixFor(usage, quota));
};

/** What the owner does about a folder over its quota, by what it is over. */
const fixFor = (usage: StateUsage, quota: StateQuota): string => {
  if (usage.unmeasured !== undefined) {
    return "make all of that folder readable to homed's user (chmod -R u+rwX) and remove what the plugin does not need from it";
  }
  if (usage.bytes <= quota.bytes) {
    return 'remove files it does not need from that folder (the bound on files is not a setting; `find FOLDER -mindepth 1 -delete` empties it where `rm *` takes too many names)';
  }
  return 'remove what it does not need from that folder (or raise security.sandbox.pluginStateMb in settings.json and restart homed)';
};

/**
 * Measures `folder` (with what the processes under `pid` hold open there) every STATE_CHECK_MS on
 * `timers` (a count that took long waits CHECK_BACKOFF times as long); calls `over` once, with
 * why, when it is over `quota` or cannot be measured. `stop` ends the watch.
 */
export const watchStateQuota = (
  folder: string,
  quota: StateQuota,
  pid: number,
  timers: Timers,
  over: (why: string) => void,
): Readonly<{ stop: () => void }> => {
  let stopped = false;
  let armed: unknown;
  const stop = (): void => {
    stopped = true;
    if (armed !== undefined) timers.clearTimer(armed);
    armed = undefined;
  };
  const count = async (): Promise<void> => {
    armed = undefined;
    if (stopped) return;
    const started = performance.now();
    const why = await stateUsage(folder, quota, await processTree(pid)).then(
      (usage) => overQuota(usage, quota),
      (error: unknown) => overQuota({ bytes: 0, entries: 0, unmeasured: codeOf(error) }, quota),
    );
    if (stopped) return;
    if (why === undefined) {
      armed = timers.setTimer(() => void count(), Math.max(STATE_CHECK_MS, CHECK_BACKOFF * (performance.now() - started)));
      return;
    }
    stop();
    over(why);
  };
  armed = timers.setTimer(() => void count(), STATE_CHECK_MS);
  return { stop };
};
