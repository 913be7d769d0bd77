/**
 * One writer per data dir: `homed run`, `homed chat` and every other command that writes into
 * a data dir take DIR/homed.lock before they open anything there. The lock is the kernel's
 * (freed when its holder dies, SIGKILL included), so a crash never leaves a start blocked;
 * DIR/homed.pid only names the holder for the refusal, and is never trusted as the lock.
 * Readers (log, replay, plugins) take no lock.
 */
import { renameSync, unlinkSync, writeFileSync } from 'node:fs';
import { readRegularFile } from '../adapters/files/privateFiles.ts';
import { join } from 'node:path';
import { tryExclusiveLock } from '../adapters/sqlite/exclusiveFileLock.ts';
import { HologramError } from '../events/index.ts';
import { lockHolderPid } from './lockHolder.ts';

export const LOCK_FILE = 'homed.lock';
export const PID_FILE = 'homed.pid';

export type LockHolder = Readonly<{ pid: number; command?: string }>;

/** `homed run` (pid 123), or what is known of whoever holds the lock. */
export const describeHolder = (holder: LockHolder | undefined): string =>
  holder === undefined
    ? 'another homed process (its pid could not be found)'
    : `${holder.command ?? 'another homed process'} (pid ${holder.pid})`;

/** Another process holds the data dir: the message names it and says what to do. */
export class DataDirInUse extends HologramError {
  readonly code = 'DATA_DIR_IN_USE';
  constructor(
    readonly dataDir: string,
    readonly holder: LockHolder | undefined,
    message: string,
  ) {
    super(message);
  }
}

export type DataDirLock = Readonly<{ dataDir: string; release(): void }>;

/** The refusal a daemon start gets; other writers say what they would have written. */
export const daemonRefusal = (dataDir: string, holder: LockHolder | undefined): string =>
  `the data dir ${dataDir} is in use by ${describeHolder(holder)}; ` +
  `stop that one first${holder ? ` (kill -TERM ${holder.pid})` : ''}, or start this one with another --data DIR`;

const readPidFile = (dataDir: string): LockHolder | undefined => {
  try {
    const read = readRegularFile(join(dataDir, PID_FILE));
    if (typeof read !== 'object') return undefined;
    const [pidLine, command] = read.toString('utf8').split('\n');
    const pid = Number(pidLine);
    return Number.isSafeInteger(pid) && pid > 0 ? { pid, ...(command ? { command } : {}) } : undefined;
  } catch {
    return undefined;
  }
};

const isAlive = (pid: number): boolean => {
  try {
    process.kill(pid, 0); // signal 0: only asks whether the process exists
    return true;
  } catch (error) {
    return (error as { code?: string }).code === 'EPERM';
  }
};

/**
 * Who holds the lock: the kernel's answer (/proc/locks) when there is one, else the pid file's
 * if that process is alive. The command comes from the pid file only when its pid is the holder.
 */
export const holderOf = (dataDir: string): LockHolder | undefined => {
  const recorded = readPidFile(dataDir);
  const pid = lockHolderPid(join(dataDir, LOCK_FILE)) ?? (recorded && isAlive(recorded.pid) ? recorded.pid : undefined);
  if (pid === undefined) return undefined;
  return recorded?.pid === pid && recorded.command ? { pid, command: recorded.command } : { pid };
};

/** How often, and how far apart, a refusal looks again for a holder still taking the lock. */
const HOLDER_LOOKS = 20;
const HOLDER_LOOK_MS = 10;

/**
 * The holder, looked for again for up to 0.2 s while it cannot be named: a process that is
 * taking the lock at this very moment holds only SQLite's passing locks, and writes its pid
 * file a few milliseconds later. Only a refusal waits (synchronously: nothing else runs yet).
 */
const holderOnceKnown = (dataDir: string): LockHolder | undefined => {
  const pause = new Int32Array(new SharedArrayBuffer(4));
  for (let look = 1; ; look++) {
    const holder = holderOf(dataDir);
    if (holder !== undefined || look >= HOLDER_LOOKS) return holder;
    Atomics.wait(pause, 0, 0, HOLDER_LOOK_MS);
  }
};

/**
 * Takes the data dir's lock for `command` (e.g. 'homed run'), or throws `DataDirInUse` with
 * `refusal(holder)` at once, without waiting. Whatever `homed.pid` says when the lock is free
 * (a crashed holder's pid, now another process's) is overwritten, not believed.
 */
export const lockDataDir = (
  dataDir: string,
  command: string,
  refusal: (holder: LockHolder | undefined) => string = (holder) => daemonRefusal(dataDir, holder),
): DataDirLock => {
  const lock = tryExclusiveLock(join(dataDir, LOCK_FILE));
  if (!lock) {
    const holder = holderOnceKnown(dataDir);
    throw new DataDirInUse(dataDir, holder, refusal(holder));
  }
  const pidFile = join(dataDir, PID_FILE);
  try {
    const temp = `${pidFile}.${process.pid}.tmp`;
    writeFileSync(temp, `${process.pid}\n${command}\n`, { mode: 0o600 });
    renameSync(temp, pidFile);
  } catch (error) {
    lock.release();
    throw error;
  }
  return {
    dataDir,
    release: () => {
      // The pid file goes first: once the lock is free, the next holder writes its own.
      try {
        if (readPidFile(dataDir)?.pid === process.pid) unlinkSync(pidFile);
      } catch {
        // already gone: nothing to tidy
      } finally {
        lock.release();
      }
    },
  };
};
