/**
 * How much a subprocess plugin may keep in its state folder, the one folder of the disk it may
 * write: without a bound, a plugin filled the disk the data dir is on, and the daemon could then
 * append nothing. The kernel bounds each file it writes (`prlimit --fsize` in its sandbox); the
 * host bounds the folder as a whole, before each start and every STATE_CHECK_MS from its spawn,
 * and stops a plugin over it. Counted as the disk counts it (allocated blocks, each file once
 * however many links it has, folders included), files it removed but holds open included, and in
 * entries too, so a plugin cannot fill the disk with empty files or make the count slow. A folder
 * that cannot be measured (made unreadable, paths past the system's length) counts as full: what
 * the host cannot see, it cannot bound.
 */
import { lstat, readdir, readFile, readlink, stat } from 'node:fs/promises';
import { join, relative } from 'node:path';
import type { Timers } from '../../events/index.ts';
import { HologramError } from '../../events/index.ts';

export const DEFAULT_PLUGIN_STATE_MB = 1024;
/** The most files and folders a state folder may hold, whatever their size. */
export const STATE_ENTRIES_AT_MOST = 100_000;
/** How often a running plugin's state folder is measured (the next count is armed once one ends). */
export const STATE_CHECK_MS = 2_000;

export type StateQuota = Readonly<{ bytes: number; entries: number }>;

export const stateQuotaOf = (megabytes: number, entries = STATE_ENTRIES_AT_MOST): StateQuota => ({
  bytes: megabytes * 1024 * 1024,
  entries,
});

/**
 * What a state folder holds, as far as it was counted (counting stops once past either bound);
 * `unmeasured`, why part of it could not be counted.
 */
export type StateUsage = Readonly<{ bytes: number; entries: number; unmeasured?: string }>;

const MB = 1024 * 1024;
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

const codeOf = (error: unknown): string => (error as NodeJS.ErrnoException)?.code ?? String(error);

/** A file or folder gone while it was counted (the plugin removing it) counts as nothing. */
const gone = (error: unknown): boolean => ['ENOENT', 'ENOTDIR'].includes(codeOf(error));

/** Where in `folder` something could not be counted, and why, quoted short. */
const unmeasuredAt = (folder: string, path: string, error: unknown): string => {
  const inside = relative(folder, path) || '.';
  const quoted = inside.length > PATH_QUOTED ? `${inside.slice(0, PATH_QUOTED)}…` : inside;
  return `${codeOf(error)} at ${quoted}`;
};

/** A running count: bytes and entries so far, and the files counted already (by device and inode). */
type Count = { bytes: number; entries: number; readonly files: Set<string> };

/** Adds a file's blocks once however many names (or descriptors) lead to it. */
const addFile = (count: Count, info: Readonly<{ dev: number; ino: number; blocks: number }>): void => {
  const key = `${info.dev}:${info.ino}`;
  if (count.files.has(key)) return;
  count.files.add(key);
  count.bytes += info.blocks * 512;
};

/**
 * The files in `folder` that the processes `holders` removed but hold open (the disk keeps them
 * until they are closed), added to `count`. A process gone meanwhile is passed over.
 */
const addRemovedButOpen = async (folder: string, holders: readonly number[], count: Count): Promise<void> => {
  const prefix = `${folder}/`;
  for (const pid of holders) {
    let fds: string[];
    try {
      fds = await readdir(`/proc/${pid}/fd`);
    } catch {
      continue;
    }
    for (const fd of fds) {
      const path = `/proc/${pid}/fd/${fd}`;
      try {
        const target = await readlink(path);
        if (target.startsWith(prefix) && target.endsWith(' (deleted)')) addFile(count, await stat(path));
      } catch {
        // closed meanwhile, or the process is gone
      }
    }
  }
};

/**
 * What `folder` holds, never following a link, folder after folder, and what the processes
 * `holders` removed from it but hold open; stops once past `quota` (the counts then say only
 * that), or at the first part that cannot be read.
 */
export const stateUsage = async (folder: string, quota: StateQuota, holders: readonly number[] = []): Promise<StateUsage> => {
  const count: Count = { bytes: 0, entries: 0, files: new Set() };
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
  await addRemovedButOpen(folder, holders, count);
  return count;
};

/** A plugin whose state folder is over its quota before it starts. */
export class PluginStateOverQuota extends HologramError {
  readonly code = 'PLUGIN_STATE_OVER_QUOTA';
  constructor(plugin: string, folder: string, why: string) {
    super(
      `plugin '${plugin}' was not started: ${why}, ${folder}; remove what it does not need from that folder ` +
        '(or raise security.sandbox.pluginStateMb in settings.json and restart homed)',
    );
  }
}

/** @throws PluginStateOverQuota when `folder` holds more than `quota`, or cannot be measured. */
export const checkStateQuota = async (plugin: string, folder: string, quota: StateQuota): Promise<void> => {
  const why = overQuota(await stateUsage(folder, quota), quota);
  if (why !== undefined) throw new PluginStateOverQuota(plugin, folder, why);
};

/** `pid` and every process below it, through /proc's lists of each thread's children (empty where /proc has none). */
export const processTree = async (pid: number): Promise<number[]> => {
  const tree: number[] = [];
  const seen = new Set<number>();
  for (const queue = [pid]; queue.length > 0; ) {
    const next = queue.pop()!;
    if (seen.has(next)) continue;
    seen.add(next);
    tree.push(next);
    let tasks: string[];
    try {
      tasks = await readdir(`/proc/${next}/task`);
    } catch {
      continue;
    }
    for (const task of tasks) {
      const children = await readFile(`/proc/${next}/task/${task}/children`, 'utf8').catch(() => '');
      for (const child of children.split(' ')) if (/^\d+$/.test(child)) queue.push(Number(child));
    }
  }
  return tree;
};

/**
 * Measures `folder` (with what the processes under `pid` hold open there) every STATE_CHECK_MS
 * on `timers` and calls `over` once, with why, when it is over `quota` or cannot be measured;
 * `stop` ends the watch.
 */
export const watchStateQuota = (
  folder: string,
  quota: StateQuota,
  pid: number,
  timers: Timers,
  over: (why: string) => void,
): Readonly<{ stop: () => void }> => {
  let stopped = false;
  let timer: unknown;
  const arm = (): void => {
    timer = timers.setTimer(() => void check(), STATE_CHECK_MS);
  };
  const check = async (): Promise<void> => {
    if (stopped) return;
    const why = await stateUsage(folder, quota, await processTree(pid)).then(
      (usage) => overQuota(usage, quota),
      (error: unknown) => overQuota({ bytes: 0, entries: 0, unmeasured: codeOf(error) }, quota),
    );
    if (stopped) return;
    if (why === undefined) return arm();
    stopped = true;
    over(why);
  };
  arm();
  return {
    stop: () => {
      stopped = true;
      timers.clearTimer(timer);
    },
  };
};
