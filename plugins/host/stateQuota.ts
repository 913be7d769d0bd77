/**
 * How much a subprocess plugin may keep in its state folder, the one folder of the disk it may
 * write: without a bound, a plugin filled the disk the data dir is on, and the daemon could then
 * append nothing. The kernel bounds each file it writes (`prlimit --fsize` in its sandbox); the
 * host bounds the folder as a whole, before each start and every few seconds while it runs, and
 * stops a plugin over it. Counted as the disk counts it (allocated blocks, folders included), and
 * in entries too, so a plugin cannot fill the disk with empty files or make the count slow.
 */
import { lstat, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import type { Timers } from '../../events/index.ts';
import { HologramError } from '../../events/index.ts';

export const DEFAULT_PLUGIN_STATE_MB = 1024;
/** The most files and folders a state folder may hold, whatever their size. */
export const STATE_ENTRIES_AT_MOST = 100_000;
/** How often a running plugin's state folder is measured. */
export const STATE_CHECK_MS = 5_000;

export type StateQuota = Readonly<{ bytes: number; entries: number }>;

export const stateQuotaOf = (megabytes: number, entries = STATE_ENTRIES_AT_MOST): StateQuota => ({
  bytes: megabytes * 1024 * 1024,
  entries,
});

/** What a state folder holds, as far as it was counted: counting stops once past either bound. */
export type StateUsage = Readonly<{ bytes: number; entries: number }>;

const MB = 1024 * 1024;

/** Why `usage` is over `quota`, said to the owner, or undefined when it is within. */
export const overQuota = (usage: StateUsage, quota: StateQuota): string | undefined => {
  if (usage.bytes > quota.bytes) {
    return `its state folder holds more than ${quota.bytes / MB} MB (security.sandbox.pluginStateMb)`;
  }
  if (usage.entries > quota.entries) return `its state folder holds more than ${quota.entries} files and folders`;
  return undefined;
};

/** A file or folder gone while it was counted (the plugin removing it) counts as nothing. */
const gone = (error: unknown): boolean => ['ENOENT', 'ENOTDIR'].includes((error as NodeJS.ErrnoException)?.code ?? '');

/**
 * What `folder` holds, never following a link, folder after folder; stops once past `quota`
 * (the counts then say only that). A folder that cannot be read is counted as it is.
 */
export const stateUsage = async (folder: string, quota: StateQuota): Promise<StateUsage> => {
  let bytes = 0;
  let entries = 0;
  const folders = [folder];
  for (let next = folders.pop(); next !== undefined; next = folders.pop()) {
    let names: string[];
    try {
      names = await readdir(next);
    } catch (error) {
      if (gone(error) || (error as NodeJS.ErrnoException)?.code === 'EACCES') continue;
      throw error;
    }
    entries += names.length;
    if (entries > quota.entries) break;
    for (const name of names) {
      const path = join(next, name);
      try {
        const stat = await lstat(path);
        bytes += stat.blocks * 512;
        if (stat.isDirectory()) folders.push(path);
      } catch (error) {
        if (!gone(error)) throw error;
      }
      if (bytes > quota.bytes) return { bytes, entries };
    }
  }
  return { bytes, entries };
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

/** @throws PluginStateOverQuota when `folder` holds more than `quota`. */
export const checkStateQuota = async (plugin: string, folder: string, quota: StateQuota): Promise<void> => {
  const why = overQuota(await stateUsage(folder, quota), quota);
  if (why !== undefined) throw new PluginStateOverQuota(plugin, folder, why);
};

/**
 * Measures `folder` every STATE_CHECK_MS on `timers` and calls `over` once, with why, when it is
 * over `quota`; `stop` ends the watch. A count that fails is said through `failed` and the watch
 * goes on.
 */
export const watchStateQuota = (
  folder: string,
  quota: StateQuota,
  timers: Timers,
  over: (why: string) => void,
  failed: (error: unknown) => void,
): Readonly<{ stop: () => void }> => {
  let stopped = false;
  let timer: unknown;
  const arm = (): void => {
    timer = timers.setTimer(() => void check(), STATE_CHECK_MS);
  };
  const check = async (): Promise<void> => {
    if (stopped) return;
    let why: string | undefined;
    try {
      why = overQuota(await stateUsage(folder, quota), quota);
    } catch (error) {
      failed(error);
    }
    if (stopped) return;
    if (why !== undefined) {
      stopped = true;
      over(why);
      return;
    }
    arm();
  };
  arm();
  return {
    stop: () => {
      stopped = true;
      timers.clearTimer(timer);
    },
  };
};
