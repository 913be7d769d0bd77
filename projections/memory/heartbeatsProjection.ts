/** When each heartbeat loop last fired: where a loop resumes after a restart. */
import { defineProjection, type ReadModelTx } from '../projection.ts';

export const heartbeatsProjection = defineProjection({
  name: 'memory_heartbeats',
  version: 1,
  handles: ['HeartbeatFired'],
  tables: [
    {
      name: 'memory_heartbeats_loops',
      ddl: 'CREATE TABLE memory_heartbeats_loops (loop TEXT PRIMARY KEY, last_fired_at REAL NOT NULL) WITHOUT ROWID',
    },
  ],
  evolve(tx, event) {
    tx.run(
      'INSERT INTO memory_heartbeats_loops (loop, last_fired_at) VALUES (?, ?) ON CONFLICT (loop) DO UPDATE SET last_fired_at = max(last_fired_at, excluded.last_fired_at)',
      [event.data.loop, event.data.at],
    );
  },
  view: (tx) => tx.all('SELECT loop, last_fired_at FROM memory_heartbeats_loops ORDER BY loop'),
});

/** Each loop's latest firing. */
export const lastFirings = (tx: ReadModelTx): Record<string, number> =>
  Object.fromEntries(
    tx
      .all<{ loop: string; last_fired_at: number }>('SELECT loop, last_fired_at FROM memory_heartbeats_loops')
      .map((r) => [r.loop, r.last_fired_at]),
  );
