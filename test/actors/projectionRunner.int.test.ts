import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { SqliteEventStore } from '../../adapters/sqlite/sqliteEventStore.ts';
import { ProjectionFailed, ProjectionRunner } from '../../actors/projections/projectionRunner.ts';
import { startRebuild } from '../../actors/replay/rebuildProjections.ts';
import { verifyProjections } from '../../actors/replay/verifyProjections.ts';
import { SequentialIds, VirtualClock, type AnyEvent } from '../../events/index.ts';
import { defineProjection, type Projection } from '../../projections/index.ts';
import { useTempDir } from '../support/tempDir.ts';
import { createTestCatalog, noted } from '../support/testCatalog.ts';

const tempDir = useTempDir();

const openStore = (path = join(tempDir(), 'events.db')) =>
  SqliteEventStore.open<AnyEvent>(path, {
    catalog: createTestCatalog(),
    clock: new VirtualClock(5),
    ids: new SequentialIds(),
    pollIntervalMs: 10,
  });

/** Sums `n` per stream; version 2 sums n*2 (a changed fold). */
const sums = (version = 1, factor = 1): Projection<'TestNoted'> =>
  defineProjection({
    name: 'sums',
    version,
    handles: ['TestNoted'],
    tables: [{ name: 'sums_by_stream', ddl: 'CREATE TABLE sums_by_stream (stream TEXT PRIMARY KEY, total INTEGER NOT NULL)' }],
    evolve(tx, event) {
      const { n } = event.data as { n: number };
      tx.run('INSERT INTO sums_by_stream (stream, total) VALUES (?, ?) ON CONFLICT (stream) DO UPDATE SET total = total + excluded.total', [
        event.stream,
        n * factor,
      ]);
    },
  });

const totals = (runner: ProjectionRunner) => runner.dump('sums').sums_by_stream as { stream: string; total: number }[];

const appendMany = async (store: SqliteEventStore<AnyEvent>, count: number, offset = 0) => {
  for (let i = 0; i < count; i++) await store.append(`s-${i % 3}`, [noted(offset + i)]);
};

describe('ProjectionRunner', () => {
  it('inline: the read model moves inside the append transaction', async () => {
    const store = openStore();
    await appendMany(store, 4);
    const runner = new ProjectionRunner(store.db, [sums()]);
    runner.prepare();
    runner.attachInline(store); // catches up the 4 existing events first
    await store.append('s-0', [noted(100)]);
    expect(runner.positionOf('sums')).toBe(5);
    expect(totals(runner)).toEqual([
      { stream: 's-0', total: 103 },
      { stream: 's-1', total: 1 },
      { stream: 's-2', total: 2 },
    ]);
    await store.close();
  });

  it('inline: a failing fold refuses the append, and nothing of it is stored', async () => {
    const store = openStore();
    const failing = defineProjection({
      ...sums(),
      evolve: (_tx, e) => {
        if ((e.data as { n: number }).n === 13) throw new Error('unlucky');
      },
    });
    const runner = new ProjectionRunner(store.db, [failing]);
    runner.prepare();
    runner.attachInline(store);
    await store.append('s', [noted(1)]);
    await expect(store.append('s', [noted(2), noted(13)])).rejects.toThrow(ProjectionFailed);
    expect(await store.headSeq()).toBe(1);
    expect(runner.positionOf('sums')).toBe(1);
    await store.close();
  });

  it('async: tails the log and catches up from its checkpoint after a stop (a crash between append and fold)', async () => {
    const path = join(tempDir(), 'events.db');
    let store = openStore(path);
    let runner = new ProjectionRunner(store.db, [sums()]);
    runner.prepare();
    const subscription = runner.follow(store, (e) => {
      throw e;
    });
    await appendMany(store, 10);
    await subscription.caughtUp(10);
    await subscription.stop();
    await appendMany(store, 5, 10); // appended while no projection runs
    expect(runner.positionOf('sums')).toBe(10);
    await store.close();

    store = openStore(path);
    runner = new ProjectionRunner(store.db, [sums()]);
    expect(runner.prepare()).toEqual([]);
    await runner.catchUp(store);
    const rebuild = startRebuild(store, [sums()]);
    await rebuild.advanceTo(15);
    expect(runner.checksum('sums')).toBe(rebuild.runner.checksum('sums'));
    expect(runner.positionOf('sums')).toBe(15);
    rebuild.close();
    await store.close();
  });

  it('a failing fold leaves the read model and checkpoint at the last good batch', async () => {
    const store = openStore();
    await store.append('s', [noted(1)]);
    await store.append('s', [noted(13)]);
    const failing = defineProjection({
      ...sums(),
      evolve: (tx, e) => {
        sums().evolve(tx, e);
        if ((e.data as { n: number }).n === 13) throw new Error('unlucky');
      },
    });
    const runner = new ProjectionRunner(store.db, [failing]);
    runner.prepare();
    const error = await runner.catchUp(store, { batchSize: 1 }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ProjectionFailed);
    expect((error as Error).message).toContain('event seq 2 (TestNoted)');
    expect(runner.positionOf('sums')).toBe(1);
    expect(totals(runner)).toEqual([{ stream: 's', total: 1 }]);
    await store.close();
  });

  it('rebuilding twice gives identical checksums, equal to the live read model', async () => {
    const store = openStore();
    const live = new ProjectionRunner(store.db, [sums()]);
    live.prepare();
    live.attachInline(store);
    await appendMany(store, 30);
    const first = startRebuild(store, [sums()]);
    await first.advanceTo(30);
    const second = startRebuild(store, [sums()]);
    await second.advanceTo(30);
    expect(first.runner.checksums()).toEqual(second.runner.checksums());
    expect(first.runner.checksum('sums')).toBe(live.checksum('sums'));
    first.close();
    second.close();
    await store.close();
  });

  it('rebuilds a projection from zero when its version changes', async () => {
    const path = join(tempDir(), 'events.db');
    let store = openStore(path);
    const v1 = new ProjectionRunner(store.db, [sums(1)]);
    v1.prepare();
    v1.attachInline(store);
    await appendMany(store, 3);
    await store.close();

    store = openStore(path);
    const v2 = new ProjectionRunner(store.db, [sums(2, 10)]);
    expect(v2.prepare()).toEqual(['sums']);
    expect(v2.positionOf('sums')).toBe(0);
    await v2.catchUp(store);
    expect(totals(v2)).toEqual([
      { stream: 's-0', total: 0 },
      { stream: 's-1', total: 10 },
      { stream: 's-2', total: 20 },
    ]);
    await store.close();
  });

  it('verify names the first sequence where a fold wrote something else than the live daemon did', async () => {
    const store = openStore();
    const live = new ProjectionRunner(store.db, [sums()], { trail: true });
    live.prepare();
    live.attachInline(store);
    await appendMany(store, 6);
    // A build whose fold differs from event seq 4 on (n >= 3 is doubled).
    const changed = defineProjection({
      ...sums(),
      evolve: (tx, e) => sums(1, (e.data as { n: number }).n >= 3 ? 2 : 1).evolve(tx, e),
    });
    const [verdict] = await verifyProjections(store, store.db, [changed]);
    expect(verdict).toMatchObject({ projection: 'sums', status: 'diverged', firstDivergingSeq: 4 });
    const [same] = await verifyProjections(store, store.db, [sums()]);
    expect(same).toMatchObject({ status: 'match', position: 6 });
    await store.close();
  });

  it('verify reports a read model changed outside its fold', async () => {
    const store = openStore();
    const live = new ProjectionRunner(store.db, [sums()], { trail: true });
    live.prepare();
    live.attachInline(store);
    await appendMany(store, 3);
    store.db.prepare("UPDATE sums_by_stream SET total = 999 WHERE stream = 's-1'").run();
    const [verdict] = await verifyProjections(store, store.db, [sums()]);
    expect(verdict).toMatchObject({ status: 'diverged', firstDivergingSeq: null });
    expect((verdict as { detail: string }).detail).toContain('changed outside the fold');
    await store.close();
  });
});
