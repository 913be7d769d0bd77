/**
 * A memory on an event log: the memory projections run inline with each append, the service
 * reads them, and the heartbeats run on the times they are given. Used by the daemon's memory
 * module and by the LoCoMo benchmark, so both exercise the same path.
 */
import type { SqliteEventStore } from '../../adapters/sqlite/sqliteEventStore.ts';
import type { Clock, IdSource } from '../../events/index.ts';
import { memoryProjections } from '../../projections/index.ts';
import { ProjectionRunner } from '../projections/projectionRunner.ts';
import { SqliteReadModelTx } from '../projections/sqliteReadModelTx.ts';
import { MemoryHeartbeats } from './memoryHeartbeats.ts';
import { MemoryService, type MemoryConfig } from './memoryService.ts';

export type OpenMemory = Readonly<{ service: MemoryService; heartbeats: MemoryHeartbeats; runner: ProjectionRunner }>;

/** For a store whose memory projections are not attached yet (the benchmark, tests). */
export const openMemory = async (store: SqliteEventStore, options: { ids: IdSource; clock: Clock; startAt: number; config?: Partial<MemoryConfig> }): Promise<OpenMemory> => {
  const runner = new ProjectionRunner(store.db, memoryProjections(), { trail: true });
  runner.prepare();
  await runner.catchUp(store);
  runner.attachInline(store);
  const service = new MemoryService({ store, tx: new SqliteReadModelTx(store.db), ids: options.ids, clock: options.clock, ...(options.config ? { config: options.config } : {}) });
  service.start();
  return { service, heartbeats: new MemoryHeartbeats(service, store, options.startAt), runner };
};
