/**
 * Rebuild figure: every projection of the daemon folded from zero over a mixed log into a
 * fresh read-model database, against a raw `SELECT * FROM events ORDER BY seq` scan of the
 * same log.
 */
import type { SqliteEventStore } from '../adapters/sqlite/sqliteEventStore.ts';
import { startRebuild } from '../actors/replay/rebuildProjections.ts';
import { allProjections } from '../projections/index.ts';
import type { BenchContext } from './context.ts';
import { makeFigure, type Figure } from './figures.ts';
import { log, measurePair, progress, type TimedRun } from './measure.ts';
import { type BenchEvent, mixedLog, openStore } from './workload.ts';

const POPULATE_CHUNK = 1_000;

/** Writes the mixed log through the store, one append per event, group-committed per chunk. */
const populate = async (store: SqliteEventStore<BenchEvent>, total: number): Promise<void> => {
  const report = progress(`writing a mixed log of ${total} events`);
  let pending: Promise<unknown>[] = [];
  let written = 0;
  for (const { stream, event } of mixedLog(total)) {
    pending.push(store.append(stream, [event]));
    if (pending.length === POPULATE_CHUNK) {
      await Promise.all(pending);
      written += pending.length;
      pending = [];
      report(written, total);
    }
  }
  await Promise.all(pending);
  report(total, total);
};

/** Figure 4: `allProjections()` rebuilt from zero vs a raw scan of the events table. */
export const projectionRebuild = async (ctx: BenchContext): Promise<Figure> => {
  const n = ctx.events;
  const logPath = ctx.temp.file('rebuild-log');
  const store = openStore(logPath);
  try {
    await populate(store, n);
    const head = await store.headSeq();
    if (head !== n) throw new Error(`projection.rebuild: the mixed log holds ${head} events, expected ${n}`);

    const scan = store.db.prepare('SELECT * FROM events ORDER BY seq');
    const baseline: TimedRun = async () => {
      const t0 = performance.now();
      let rows = 0;
      for (const _row of scan.iterate()) rows += 1;
      const ms = performance.now() - t0;
      if (rows !== n) throw new Error(`projection.rebuild: the scan saw ${rows} rows, expected ${n}`);
      return ms;
    };

    let run = 0;
    const value: TimedRun = async () => {
      run += 1;
      const path = ctx.temp.file('readmodel');
      const onProgress = run === 1 ? progress('rebuilding projections (warm-up)') : undefined;
      const t0 = performance.now();
      // The same path as `homed replay --out FILE`: a fresh file, every projection from zero.
      const rebuild = startRebuild(store, allProjections(), { targetPath: path, ...(onProgress ? { onProgress } : {}) });
      try {
        const position = await rebuild.advanceTo(n);
        const ms = performance.now() - t0;
        const folded = rebuild.db.prepare('SELECT sum(version) AS n FROM streams_catalog').get() as { n: number };
        if (position !== n || folded.n !== n) {
          throw new Error(`projection.rebuild: folded ${folded.n} events up to ${position}, expected ${n}`);
        }
        return ms;
      } finally {
        rebuild.close();
        ctx.temp.remove(path);
      }
    };

    log(`projection.rebuild: log of ${n} events ready`);
    const result = await measurePair('projection.rebuild', n, ctx.reps, { baseline, value });
    return makeFigure('projection.rebuild', 'events/s', result.value, result.baseline, {
      ratio: result.ratio,
      target: 0.5,
      note: `${n} events (~3% kernel, the rest over 100 streams), all projections into a fresh file DB vs a raw ordered scan; median of ${ctx.reps}`,
    });
  } finally {
    await store.close();
    ctx.temp.remove(logPath);
  }
};
