/**
 * Rebuilds projections from the log into a fresh database, optionally stopping at chosen
 * sequences to look at the read models there (checksums, dumps).
 */
import { openDatabase, type SqliteDatabase } from '../../adapters/sqlite/openDatabase.ts';
import type { AnyEvent, EventStore } from '../../events/index.ts';
import type { Projection } from '../../projections/index.ts';
import { ProjectionRunner } from '../projections/projectionRunner.ts';

export type RebuildOptions = Readonly<{
  /** Where the fresh read models go; default an in-memory database. */
  targetPath?: string;
  trail?: boolean;
  onProgress?: (position: number, head: number) => void;
}>;

export type Rebuild = Readonly<{
  runner: ProjectionRunner;
  db: SqliteDatabase;
  /** Applies events up to `seq` (inclusive) and returns the position reached. */
  advanceTo(seq: number): Promise<number>;
  close(): void;
}>;

export const startRebuild = <E extends AnyEvent>(
  store: EventStore<E>,
  projections: readonly Projection<string>[],
  options: RebuildOptions = {},
): Rebuild => {
  const db = openDatabase(options.targetPath ?? ':memory:', { durability: 'rebuildable' });
  const runner = new ProjectionRunner(db, projections, { trail: options.trail ?? false });
  runner.resetAll();
  return {
    runner,
    db,
    advanceTo: (seq) =>
      runner.catchUp(store, { toSeq: seq, batchSize: 5_000, ...(options.onProgress ? { onProgress: options.onProgress } : {}) }),
    close: () => db.close(),
  };
};
