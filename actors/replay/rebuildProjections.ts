/**
 * Rebuilds projections from the log into a fresh database, optionally stopping at chosen
 * sequences to look at the read models there (checksums, dumps). Events are applied in batches
 * of REBUILD_BATCH_SIZE, one read of the log each, so a rebuild inside the daemon (time travel,
 * verify from the web UI) lets other work run between two batches when its reads do.
 */
import { openDatabase, type SqliteDatabase } from '../../adapters/sqlite/openDatabase.ts';
import type { AnyEvent, EventStore, HologramEvent } from '../../events/index.ts';
import type { Projection } from '../../projections/index.ts';
import { ProjectionRunner } from '../projections/projectionRunner.ts';

/** Events applied between two reads of the log (a few milliseconds of folding each). */
export const REBUILD_BATCH_SIZE = 500;

export type RebuildOptions = Readonly<{
  /** Where the fresh read models go; default an in-memory database. */
  targetPath?: string;
  trail?: boolean;
  onProgress?: (position: number, head: number) => void;
}>;

export type Rebuild<E extends AnyEvent = HologramEvent> = Readonly<{
  runner: ProjectionRunner;
  db: SqliteDatabase;
  /**
   * Applies events up to `seq` (inclusive), read from `from` (default the store the rebuild
   * started on), and returns the position reached.
   */
  advanceTo(seq: number, from?: EventStore<E>): Promise<number>;
  close(): void;
}>;

export const startRebuild = <E extends AnyEvent>(
  store: EventStore<E>,
  projections: readonly Projection<string>[],
  options: RebuildOptions = {},
): Rebuild<E> => {
  const db = openDatabase(options.targetPath ?? ':memory:', { durability: 'rebuildable' });
  const runner = new ProjectionRunner(db, projections, { trail: options.trail ?? false });
  runner.resetAll();
  return {
    runner,
    db,
    advanceTo: (seq, from = store) =>
      runner.catchUp(from, {
        toSeq: seq,
        batchSize: REBUILD_BATCH_SIZE,
        ...(options.onProgress ? { onProgress: options.onProgress } : {}),
      }),
    close: () => db.close(),
  };
};
