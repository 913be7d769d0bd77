/**
 * A checksum of a read model: every row of every table, in an order that depends only on
 * the rows (sorted by all columns), so equal contents give equal checksums.
 */
import { createHash } from 'node:crypto';
import type { SqliteDatabase } from '../../adapters/sqlite/openDatabase.ts';
import { encodePayload } from '../../events/index.ts';
import type { Projection } from '../../projections/index.ts';

const quote = (name: string) => `"${name.replaceAll('"', '""')}"`;

export const tableColumns = (db: SqliteDatabase, table: string): string[] =>
  (db.prepare(`PRAGMA table_info(${quote(table)})`).all() as { name: string }[]).map((c) => c.name);

/** Rows of a table sorted by every column: a stable order for checksums and dumps. */
export const sortedRows = (db: SqliteDatabase, table: string): Record<string, unknown>[] => {
  const columns = tableColumns(db, table).map(quote).join(', ');
  return db.prepare(`SELECT * FROM ${quote(table)} ORDER BY ${columns}`).all() as Record<string, unknown>[];
};

export const readModelChecksum = (db: SqliteDatabase, projection: Projection<string>): string => {
  const hash = createHash('sha256');
  for (const table of [...projection.tables].sort((a, b) => a.name.localeCompare(b.name))) {
    hash.update(table.name);
    const columns = tableColumns(db, table.name);
    hash.update(columns.join(','));
    const statement = db.prepare(`SELECT * FROM ${quote(table.name)} ORDER BY ${columns.map(quote).join(', ')}`).raw();
    for (const row of statement.iterate()) hash.update(encodePayload(row));
  }
  return hash.digest('hex');
};
