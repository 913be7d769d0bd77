/** The stream catalog: every stream with its version, event count and latest event. */
import { defineProjection } from '../projection.ts';

export const streamsProjection = defineProjection({
  name: 'streams',
  version: 1,
  handles: 'all',
  tables: [
    {
      name: 'streams_catalog',
      ddl: `CREATE TABLE streams_catalog (
        stream TEXT PRIMARY KEY, version INTEGER NOT NULL, first_seq INTEGER NOT NULL,
        last_seq INTEGER NOT NULL, last_type TEXT NOT NULL, last_at INTEGER NOT NULL
      ) WITHOUT ROWID`,
    },
    {
      name: 'streams_type_counts',
      ddl: `CREATE TABLE streams_type_counts (type TEXT PRIMARY KEY, events INTEGER NOT NULL) WITHOUT ROWID`,
    },
  ],
  evolve(tx, event) {
    tx.run(
      `INSERT INTO streams_catalog (stream, version, first_seq, last_seq, last_type, last_at) VALUES (?, ?, ?, ?, ?, ?)
       ON CONFLICT (stream) DO UPDATE SET version = excluded.version, last_seq = excluded.last_seq,
         last_type = excluded.last_type, last_at = excluded.last_at`,
      [event.stream, event.version, event.seq, event.seq, event.type, event.at],
    );
    tx.run(
      `INSERT INTO streams_type_counts (type, events) VALUES (?, 1)
       ON CONFLICT (type) DO UPDATE SET events = events + 1`,
      [event.type],
    );
  },
});
