/**
 * Opens a SQLite file for the event log with the pragmas durability depends on, and turns
 * the ways opening can fail (no permission, not a database, a truncated file) into
 * `EventLogUnavailable` errors that say what to do.
 */
import Database from 'better-sqlite3';
import { closeSync, constants, fstatSync, openSync, readSync, statSync } from 'node:fs';
import { EventLogUnavailable } from '../../events/index.ts';
import { createPrivateFile } from '../files/privateFiles.ts';

export type SqliteDatabase = Database.Database;

export type OpenOptions = Readonly<{
  readonly?: boolean;
  /**
   * `'full'` (default): every commit is on disk when it returns (the event log).
   * `'rebuildable'`: no fsync per commit, for a database whose whole content is rebuilt from
   * the log (a replay target); a crash only means rebuilding it again.
   */
  durability?: 'full' | 'rebuildable';
}>;

const SQLITE_MAGIC = 'SQLite format 3\0';

/**
 * What is wrong with the file at `path` as a SQLite database, with what to do; null when nothing
 * is (none there yet, or empty: SQLite makes it). Shorter than its header declares is truncated
 * unless its write-ahead log holds the pages past its end.
 */
export const sqliteFileProblem = (path: string): string | null => {
  let size: number;
  try {
    const stat = statSync(path);
    // A FIFO or a device would be waited on, or read without end; a folder is no database.
    if (!stat.isFile()) return `${path} is not a regular file (a folder, a FIFO or a device); point at a SQLite database file`;
    size = stat.size;
  } catch {
    return null;
  }
  if (size === 0) return null;
  const header = Buffer.alloc(100);
  // Non-blocking: a FIFO put in the file's place after the look above is read as empty, never waited on.
  const fd = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK);
  let read: number;
  try {
    read = fstatSync(fd).isFile() ? readSync(fd, header, 0, 100, 0) : 0;
  } finally {
    closeSync(fd);
  }
  if (read < 100 || header.toString('latin1', 0, 16) !== SQLITE_MAGIC) {
    return `${path} is not a SQLite database (its header is missing or damaged); point --data at a Hologram data dir, or restore the file from a backup`;
  }
  const rawPageSize = header.readUInt16BE(16);
  const pageSize = rawPageSize === 1 ? 65536 : rawPageSize;
  const declaredPages = header.readUInt32BE(28);
  const headerCountValid = header.readUInt32BE(24) === header.readUInt32BE(92);
  if (headerCountValid && declaredPages > 0 && size < declaredPages * pageSize && !walHolds(path, size / pageSize, declaredPages)) {
    return (
      `${path} is truncated: its header declares ${declaredPages} pages of ${pageSize} bytes ` +
      `(${declaredPages * pageSize} bytes) but the file holds ${size} bytes; ` +
      `restore the data dir from a backup (the events past the cut are gone)`
    );
  }
  return null;
};

const WAL_HEADER_BYTES = 32;
const WAL_FRAME_HEADER_BYTES = 24;
const WAL_MAGICS = [0x377f0682, 0x377f0683];

/**
 * Whether the write-ahead log beside `path` holds every page from `firstMissing` on (1-based,
 * past what the main file holds) up to `declared`: a checkpoint that met a full disk can write the
 * header's new page count and not the pages after it, which SQLite then still reads from the WAL
 * (a red team's full disk had homed call an intact log truncated, and say to restore a backup).
 * Only frames carrying the WAL header's salts count: older ones are left over from before a reset.
 */
const walHolds = (path: string, mainPages: number, declared: number): boolean => {
  let fd: number;
  try {
    fd = openSync(`${path}-wal`, constants.O_RDONLY | constants.O_NONBLOCK);
  } catch {
    return false;
  }
  try {
    const stat = fstatSync(fd);
    const header = Buffer.alloc(WAL_HEADER_BYTES);
    if (!stat.isFile() || readSync(fd, header, 0, WAL_HEADER_BYTES, 0) < WAL_HEADER_BYTES) return false;
    if (!WAL_MAGICS.includes(header.readUInt32BE(0))) return false;
    const pageSize = header.readUInt32BE(8);
    const salts = [header.readUInt32BE(16), header.readUInt32BE(20)];
    const frameBytes = WAL_FRAME_HEADER_BYTES + pageSize;
    const missing = new Set<number>();
    for (let page = Math.floor(mainPages) + 1; page <= declared; page++) missing.add(page);
    const frame = Buffer.alloc(WAL_FRAME_HEADER_BYTES);
    for (let at = WAL_HEADER_BYTES; at + frameBytes <= stat.size && missing.size > 0; at += frameBytes) {
      if (readSync(fd, frame, 0, WAL_FRAME_HEADER_BYTES, at) < WAL_FRAME_HEADER_BYTES) break;
      if (frame.readUInt32BE(8) !== salts[0] || frame.readUInt32BE(12) !== salts[1]) break;
      missing.delete(frame.readUInt32BE(0));
    }
    return missing.size === 0;
  } finally {
    closeSync(fd);
  }
};

/** Refuses a file that is not a regular file, not a SQLite database, or shorter than its header declares. */
const checkFileHeader = (path: string): void => {
  const problem = sqliteFileProblem(path);
  if (problem !== null) throw new EventLogUnavailable(problem);
};

const explain = (path: string, error: unknown): EventLogUnavailable => {
  const code = (error as { code?: string }).code ?? '';
  const message = (error as Error).message ?? String(error);
  if (
    code === 'SQLITE_CANTOPEN' ||
    code === 'SQLITE_READONLY' ||
    code.startsWith('SQLITE_READONLY') ||
    code === 'EACCES' ||
    code === 'SQLITE_PERM'
  ) {
    return new EventLogUnavailable(
      `cannot open the event log ${path} for writing (${message}); ` +
        `make its data dir writable by this user, or choose another one with --data DIR`,
      { cause: error },
    );
  }
  if (code === 'SQLITE_NOTADB' || code === 'SQLITE_CORRUPT') {
    return new EventLogUnavailable(`the event log ${path} is damaged (${message}); restore the data dir from a backup`, { cause: error });
  }
  return new EventLogUnavailable(`cannot open the event log ${path}: ${message}`, { cause: error });
};

/**
 * Opens `path` (or `:memory:`) with WAL and `synchronous=FULL`: better-sqlite3 leaves WAL at
 * NORMAL, which can lose the last commits on power loss; FULL makes every commit durable.
 */
export const openDatabase = (path: string, options: OpenOptions = {}): SqliteDatabase => {
  if (path !== ':memory:') checkFileHeader(path);
  let db: SqliteDatabase | undefined;
  try {
    // A new database is private whatever the umask; SQLite gives its -wal and -shm the same mode.
    if (path !== ':memory:' && !options.readonly) createPrivateFile(path);
    db = new Database(path, { readonly: options.readonly ?? false, fileMustExist: options.readonly ?? false });
    db.pragma('busy_timeout = 5000');
    if (!options.readonly) {
      db.pragma('journal_mode = WAL');
      db.pragma(options.durability === 'rebuildable' ? 'synchronous = OFF' : 'synchronous = FULL');
    }
    db.pragma('foreign_keys = ON');
    // Touch the schema so a damaged file fails here, not at the first append.
    db.prepare('SELECT count(*) FROM sqlite_master').get();
    return db;
  } catch (error) {
    db?.close();
    throw explain(path, error);
  }
};
