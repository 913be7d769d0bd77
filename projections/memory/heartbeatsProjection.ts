/** Where each heartbeat loop left off (its last firing, or where it started over): where it resumes after a restart. */
import { defineProjection, type ReadModelTx } from '../projection.ts';

export const heartbeatsProjection = defineProjection({
  name: 'memory_heartbeats',
  // v2: the latest firing or start-over in log order (v1 kept the latest time, so a clock once ahead held every loop there).
  version: 2,
  handles: ['HeartbeatFired', 'HeartbeatStartedOver'],
  tables: [
    {
      name: 'memory_heartbeats_loops',
      ddl: 'CREATE TABLE memory_heartbeats_loops (loop TEXT PRIMARY KEY, left_off_at REAL NOT NULL) WITHOUT ROWID',
    },
  ],
  evolve(tx, event) {
    tx.run(
      'INSERT INTO memory_heartbeats_loops (loop, left_off_at) VALUES (?, ?) ON CONFLICT (loop) DO UPDATE SET left_off_at = excluded.left_off_at',
      [event.data.loop, event.data.at],
    );
  },
  view: (tx) => tx.all('SELECT loop, left_off_at FROM memory_heartbeats_loops ORDER BY loop'),
});

/** Where each loop left off. */
export const loopsLeftOff = (tx: ReadModelTx): Record<string, number> =>
  Object.fromEntries(
    tx
      .all<{ loop: string; left_off_at: number }>('SELECT loop, left_off_at FROM memory_heartbeats_loops')
      .map((r) => [r.loop, r.left_off_at]),
  );
