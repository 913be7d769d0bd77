/**
 * Who holds a file's POSIX lock, as the kernel says: Linux lists every lock in /proc/locks
 * with the holder's pid and the file's device and inode. Pure parsing plus two reads; an
 * answer is the kernel's, never a pid file's guess.
 */
import { readFileSync, statSync } from 'node:fs';

/** The pid of a write lock on (device, inode) in /proc/locks text, if one is listed. */
export const writeLockHolder = (procLocks: string, device: number, inode: number): number | undefined => {
  // Linux encodes st_dev as minor's low byte, then major, then minor's high bits.
  const major = (device >> 8) & 0xfff;
  const minor = (device & 0xff) | ((device >> 12) & 0xfff00);
  for (const line of procLocks.split('\n')) {
    // "1: POSIX  ADVISORY  WRITE 21534 fe:00:2195506 1073741824 1073742335"; "1: -> ..." is a waiter.
    const fields = line.trim().split(/\s+/);
    if (fields[1] === '->' || fields[3] !== 'WRITE') continue;
    const [maj, min, ino] = (fields[5] ?? '').split(':');
    const pid = Number(fields[4]);
    if (Number(ino) === inode && Number.parseInt(maj ?? '', 16) === major && Number.parseInt(min ?? '', 16) === minor && pid > 0) {
      return pid;
    }
  }
  return undefined;
};

/** The pid holding a write lock on `path` (Linux); undefined where /proc/locks is missing or does not list it. */
export const lockHolderPid = (path: string): number | undefined => {
  try {
    const { dev, ino } = statSync(path);
    return writeLockHolder(readFileSync('/proc/locks', 'utf8'), dev, ino);
  } catch {
    return undefined;
  }
};
