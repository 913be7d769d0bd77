/**
 * A memory on an event log. `createMemory` is for a log whose memory projections already run
 * inline (the daemon's projections module does that); `openMemory` attaches them itself (the
 * LoCoMo benchmark, tests). Both give the same service, so the benchmark measures the path the
 * daemon runs.
 */
import type { SqliteEventStore } from '../../adapters/sqlite/sqliteEventStore.ts';
import type { Clock, EventStore, IdSource } from '../../events/index.ts';
import type { HeartbeatLoop } from '../../machines/memory/heartbeatMachine.ts';
import { memoryProjections, type ReadModelTx } from '../../projections/index.ts';
import { ProjectionRunner } from '../projections/projectionRunner.ts';
import { SqliteReadModelTx } from '../projections/sqliteReadModelTx.ts';
import { lastFiringsIn, MemoryHeartbeats } from './memoryHeartbeats.ts';
import { MemoryService, type DenseRecall, type MemoryConfig } from './memoryService.ts';
import type { MergeJudge, RelationJudge } from './mergeJudge.ts';

export type Memory = Readonly<{ service: MemoryService; heartbeats: MemoryHeartbeats }>;

export type MemoryOptions = Readonly<{
  ids: IdSource;
  clock: Clock;
  startAt: number;
  config?: Partial<MemoryConfig>;
  intervals?: Partial<Record<HeartbeatLoop, number>>;
  /** A dense space for recall (dense + keyword); without it recall is keyword-only. */
  dense?: DenseRecall;
  /** Decides proposed entity merges; without it they stay proposals. */
  mergeJudge?: MergeJudge;
  /** Re-reads uncertain relations in the review loop; without it the loop only records firing. */
  relationJudge?: RelationJudge;
}>;

export const createMemory = async (store: EventStore, tx: ReadModelTx, options: MemoryOptions): Promise<Memory> => {
  const service = new MemoryService({
    store,
    tx,
    ids: options.ids,
    clock: options.clock,
    ...(options.config ? { config: options.config } : {}),
    ...(options.dense ? { dense: options.dense } : {}),
  });
  await service.start();
  const lastFired = await lastFiringsIn(store);
  return {
    service,
    heartbeats: new MemoryHeartbeats(
      service,
      store,
      options.startAt,
      options.intervals,
      options.mergeJudge,
      options.relationJudge,
      lastFired,
    ),
  };
};

export type OpenMemory = Memory & Readonly<{ runner: ProjectionRunner }>;

/** For a store whose memory projections are not attached yet. */
export const openMemory = async (store: SqliteEventStore, options: MemoryOptions): Promise<OpenMemory> => {
  const runner = new ProjectionRunner(store.db, memoryProjections(), { trail: true });
  runner.prepare();
  await runner.catchUp(store);
  runner.attachInline(store);
  return { ...(await createMemory(store, new SqliteReadModelTx(store.db), options)), runner };
};
