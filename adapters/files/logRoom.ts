/**
 * Room on the disk kept for the log: a file of zeros in the data dir, whose blocks the disk has
 * given it. When an append meets a full disk (a plugin filled it faster than the daemon's checks
 * see; a download beside it), the file is removed and the append tried again, so the log goes on
 * while what filled the disk is stopped; it is made again once the disk has room (LogRoomKeeper),
 * and at the next start. Made only when the disk has room for it, never through a link, readable
 * by its owner only.
 */
import { randomBytes } from 'node:crypto';
import { closeSync, lstatSync, openSync, rmSync, writeSync } from 'node:fs';
import { statfs } from 'node:fs/promises';
import { join } from 'node:path';
import { errnoCode, type Timers } from '../../events/index.ts';

export const LOG_ROOM_FILE = 'log-room';
export const LOG_ROOM_BYTES = 16 * 1024 * 1024;
/** What the room is written with: random bytes, which no file system compresses or stores as a hole. */
const FILL = randomBytes(1024 * 1024);

/** What became of the room at a start: there already, made now, or not made (why). */
export type LogRoom = Readonly<{ kind: 'kept' | 'made' } | { kind: 'not made'; why: string }>;

/**
 * Keeps LOG_ROOM_BYTES for the log in `dir`: made when missing, short (a crash while it was made)
 * or holding fewer blocks than its size (a sparse copy, a file system that stores zeros as holes:
 * freed, such a file gives the log nothing, as a red team's sparse one did).
 */
export const keepLogRoom = (dir: string, bytes = LOG_ROOM_BYTES): LogRoom => {
  const path = join(dir, LOG_ROOM_FILE);
  const found = lstatSync(path, { throwIfNoEntry: false });
  if (found?.isFile() && found.size === bytes && found.blocks * 512 >= bytes) return { kind: 'kept' };
  if (found && !found.isFile()) return { kind: 'not made', why: `${path} is there and is not a file; remove it` };
  let fd: number | undefined;
  try {
    rmSync(path, { force: true });
    fd = openSync(path, 'wx', 0o600);
    for (let written = 0; written < bytes; written += FILL.length) writeSync(fd, FILL, 0, Math.min(FILL.length, bytes - written));
    return { kind: 'made' };
  } catch (error) {
    // Only what this made is removed: whatever took its place meanwhile is left as it is.
    if (fd !== undefined) rmSync(path, { force: true });
    return { kind: 'not made', why: `${errnoCode(error) ?? String(error)} writing ${path}` };
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
};

/** Frees the room kept for the log in `dir`. @returns whether there was any to free. */
export const freeLogRoom = (dir: string): boolean => {
  const path = join(dir, LOG_ROOM_FILE);
  if (!lstatSync(path, { throwIfNoEntry: false })?.isFile()) return false;
  try {
    rmSync(path, { force: true });
  } catch (error) {
    // A folder put in its place since the look: there was no room of ours to free.
    if (errnoCode(error) === 'EISDIR' || errnoCode(error) === 'ENOTDIR') return false;
    throw error;
  }
  return true;
};

/** How often, once the room was freed, the disk is looked at for room to keep it again. */
export const ROOM_CHECK_MS = 5_000;
/** Free room the disk must have beyond the room itself before it is kept again: not the last of it. */
const ROOM_MARGIN_BYTES = 2 * LOG_ROOM_BYTES;

/** The bytes free to homed's user on the disk `folder` is on. */
export const freeBytesOn = async (folder: string): Promise<number> => {
  const disk = await statfs(folder);
  return disk.bavail * disk.bsize;
};

/**
 * The room kept for the log while the daemon runs: `free` gives it up on a full disk, and then,
 * every ROOM_CHECK_MS, it is made again once the disk has it and a margin free (said with `say`).
 */
export class LogRoomKeeper {
  private timer: unknown;
  private closed = false;
  /** Said once that the room could not be made: it is tried again every ROOM_CHECK_MS. */
  private warned = false;

  constructor(
    private readonly options: Readonly<{
      dir: string;
      timers: Timers;
      say: (line: string) => void;
      bytes?: number;
      freeBytes?: (dir: string) => Promise<number>;
    }>,
  ) {}

  /** Frees the room for an append that met a full disk. @returns whether there was any to free. */
  free(): boolean {
    const freed = freeLogRoom(this.options.dir);
    if (freed) this.arm();
    return freed;
  }

  close(): void {
    this.closed = true;
    if (this.timer !== undefined) this.options.timers.clearTimer(this.timer);
    this.timer = undefined;
  }

  private arm(): void {
    if (this.closed || this.timer !== undefined) return;
    this.timer = this.options.timers.setTimer(() => {
      this.timer = undefined;
      void this.keepAgain();
    }, ROOM_CHECK_MS);
  }

  private async keepAgain(): Promise<void> {
    const bytes = this.options.bytes ?? LOG_ROOM_BYTES;
    const free = await (this.options.freeBytes ?? freeBytesOn)(this.options.dir).catch(() => 0);
    let kept = false;
    try {
      kept = !this.closed && free >= bytes + ROOM_MARGIN_BYTES && keepLogRoom(this.options.dir, bytes).kind !== 'not made';
    } catch (error) {
      if (!this.warned)
        this.options.say(`could not keep room for the log again (${errnoCode(error) ?? String(error)}); homed tries again in a while`);
      this.warned = true;
    }
    if (kept) {
      this.options.say(`the disk of the data dir has room again: ${Math.round(bytes / (1024 * 1024))} MB are kept for the log again`);
      return;
    }
    this.arm();
  }
}
