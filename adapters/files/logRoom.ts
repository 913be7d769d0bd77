/**
 * Room on the disk kept for the log: a file of zeros in the data dir, whose blocks the disk has
 * given it. When an append meets a full disk (a plugin filled it faster than the daemon's checks
 * see; a download beside it), the file is removed and the append tried again, so the log goes on
 * while what filled the disk is stopped; the next start makes it again. Made only when the disk
 * has room for it, never through a link, readable by its owner only.
 */
import { closeSync, lstatSync, openSync, rmSync, writeSync } from 'node:fs';
import { join } from 'node:path';

export const LOG_ROOM_FILE = 'log-room';
export const LOG_ROOM_BYTES = 16 * 1024 * 1024;
const CHUNK = Buffer.alloc(1024 * 1024);

/** What became of the room at a start: there already, made now, or not made (why). */
export type LogRoom = Readonly<{ kind: 'kept' | 'made' } | { kind: 'not made'; why: string }>;

/** Keeps LOG_ROOM_BYTES for the log in `dir`: made when missing or short (a crash while it was made). */
export const keepLogRoom = (dir: string, bytes = LOG_ROOM_BYTES): LogRoom => {
  const path = join(dir, LOG_ROOM_FILE);
  const found = lstatSync(path, { throwIfNoEntry: false });
  if (found?.isFile() && found.size === bytes) return { kind: 'kept' };
  if (found && !found.isFile()) return { kind: 'not made', why: `${path} is there and is not a file; remove it` };
  rmSync(path, { force: true });
  let fd: number | undefined;
  try {
    fd = openSync(path, 'wx', 0o600);
    for (let written = 0; written < bytes; written += CHUNK.length) writeSync(fd, CHUNK, 0, Math.min(CHUNK.length, bytes - written));
    return { kind: 'made' };
  } catch (error) {
    rmSync(path, { force: true });
    return { kind: 'not made', why: `${(error as NodeJS.ErrnoException).code ?? String(error)} writing ${path}` };
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
};

/** Frees the room kept for the log in `dir`. @returns whether there was any to free. */
export const freeLogRoom = (dir: string): boolean => {
  const path = join(dir, LOG_ROOM_FILE);
  if (!lstatSync(path, { throwIfNoEntry: false })?.isFile()) return false;
  rmSync(path, { force: true });
  return true;
};
