/**
 * An exclusive lock on a file that the kernel drops when the holder dies, however it dies
 * (SIGKILL included): SQLite's POSIX record lock, taken in exclusive locking mode and held
 * until `release()`. Nothing is ever left behind that blocks the next taker.
 *
 * POSIX locks belong to the process: closing *any* descriptor of the locked file in the
 * holding process drops the lock. So the holder never opens the lock file another way, and
 * this module never opens an existing one except through SQLite.
 */
import Database from 'better-sqlite3';
import { HologramError } from '../../events/index.ts';
import { createPrivateFile } from '../files/privateFiles.ts';

/** The lock file exists but SQLite cannot lock it (not a lock file, no permission, a full disk). */
export class LockFileUnusable extends HologramError {
  readonly code = 'LOCK_FILE_UNUSABLE';
  constructor(
    readonly path: string,
    reason: string,
    options?: { cause?: unknown },
  ) {
    super(`cannot take the lock ${path} (${reason}); if no homed runs on this data dir, delete that file and start again`, options);
  }
}

export type ExclusiveLock = Readonly<{ path: string; release(): void }>;

/**
 * Takes the lock on `path` (created 0600 when missing), or returns `undefined` at once when
 * another process, or another taker in this one, holds it. Never waits.
 */
export const tryExclusiveLock = (path: string): ExclusiveLock | undefined => {
  let db: Database.Database | undefined;
  try {
    createPrivateFile(path);
    db = new Database(path, { timeout: 0 });
    db.pragma('locking_mode = EXCLUSIVE');
    db.pragma('journal_mode = MEMORY'); // no journal file beside the lock, none left by a crash
    db.exec('BEGIN EXCLUSIVE; PRAGMA user_version = 1; COMMIT'); // a write: the exclusive lock, held until close
  } catch (error) {
    db?.close();
    const code = (error as { code?: string }).code ?? '';
    if (code === 'SQLITE_BUSY' || code === 'SQLITE_LOCKED') return undefined;
    throw new LockFileUnusable(path, (error as Error).message, { cause: error });
  }
  const held = db;
  let released = false;
  return {
    path,
    release: () => {
      if (released) return;
      released = true;
      held.close();
    },
  };
};
