/** A daemon's event log read from outside the daemon (read-only, beside its writer): head, appended rows, file size. */
import { statSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { openDatabase } from '../adapters/sqlite/openDatabase.ts';

const QUIET_MS = 250;
const POLL_MS = 25;
const SETTLE_TIMEOUT_MS = 10_000;

const query = <T>(path: string, sql: string, ...params: unknown[]): T => {
  const db = openDatabase(path, { readonly: true });
  try {
    return db.prepare(sql).get(...params) as T;
  } finally {
    db.close();
  }
};

export const headSeq = (path: string): number => query<{ head: number }>(path, 'SELECT coalesce(max(seq), 0) AS head FROM events').head;

/** The head once nothing has been appended for QUIET_MS: the events a reply's end is followed by (the task finishing) are in. */
export const settledHeadSeq = async (path: string): Promise<number> => {
  const deadline = performance.now() + SETTLE_TIMEOUT_MS;
  let head = headSeq(path);
  let quietSince = performance.now();
  while (performance.now() - quietSince < QUIET_MS) {
    if (performance.now() > deadline) throw new Error(`${path}: the log kept growing for ${SETTLE_TIMEOUT_MS} ms after the last reply`);
    await sleep(POLL_MS);
    const now = headSeq(path);
    if (now !== head) {
      head = now;
      quietSince = performance.now();
    }
  }
  return head;
};

/**
 * Stored bytes of the rows after `afterSeq` up to `toSeq`: the payload blob and the id, stream,
 * type, causation and correlation strings as UTF-8; the integer columns and indexes are not counted.
 */
export const appendedRowBytes = (path: string, afterSeq: number, toSeq: number): number =>
  query<{ bytes: number }>(
    path,
    `SELECT coalesce(sum(
       length(data) + length(CAST(id AS BLOB)) + length(CAST(stream AS BLOB)) + length(CAST(type AS BLOB))
       + coalesce(length(CAST(causation AS BLOB)), 0) + coalesce(length(CAST(correlation AS BLOB)), 0)
     ), 0) AS bytes
     FROM events WHERE seq > ? AND seq <= ?`,
    afterSeq,
    toSeq,
  ).bytes;

/** Bytes of the database's pages as a reader sees them (WAL included): what the file holds after a checkpoint. */
export const pageBytes = (path: string): number =>
  query<{ bytes: number }>(path, 'SELECT page_count * page_size AS bytes FROM pragma_page_count(), pragma_page_size()').bytes;

/** Bytes on disk of the database file and its WAL. */
export const fileBytes = (path: string): number =>
  ['', '-wal'].reduce((sum, suffix) => sum + (statSync(path + suffix, { throwIfNoEntry: false })?.size ?? 0), 0);
