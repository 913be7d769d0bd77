/**
 * The stream catalog: every stream with its version (= its event count) and latest event.
 * Counts by type are left to the log itself (`homed log --type`): a second table written on
 * every event doubled the cost of the one projection that sees them all.
 */
import type { HologramEventType } from '../../events/index.ts';
import { defineProjection, type ReadModelTx } from '../projection.ts';

export const streamsProjection = defineProjection<HologramEventType>({
  name: 'streams',
  version: 2,
  handles: 'all',
  tables: [
    {
      name: 'streams_catalog',
      ddl: `CREATE TABLE streams_catalog (
        stream TEXT PRIMARY KEY, version INTEGER NOT NULL, first_seq INTEGER NOT NULL,
        last_seq INTEGER NOT NULL, last_type TEXT NOT NULL, last_at INTEGER NOT NULL
      ) WITHOUT ROWID`,
    },
  ],
  evolve(tx, event) {
    tx.run(
      `INSERT INTO streams_catalog (stream, version, first_seq, last_seq, last_type, last_at) VALUES (?, ?, ?, ?, ?, ?)
       ON CONFLICT (stream) DO UPDATE SET version = excluded.version, last_seq = excluded.last_seq,
         last_type = excluded.last_type, last_at = excluded.last_at`,
      [event.stream, event.version, event.seq, event.seq, event.type, event.at],
    );
  },
});

/** Streams named `prefix…` whose latest event is not `endType`: work a stopped process left open. */
export const openStreams = (tx: ReadModelTx, prefix: string, endType: string): string[] =>
  tx
    .all<{ stream: string }>('SELECT stream FROM streams_catalog WHERE stream >= ? AND stream < ? AND last_type != ? ORDER BY first_seq', [
      prefix,
      `${prefix}\uffff`,
      endType,
    ])
    .map((r) => r.stream);
