/**
 * eventStore.append.ids: what the log's id source costs an append once the log is large. Two logs
 * of `5 × ctx.events` events (500,000 by default, a year of daily talk), one filled with the
 * daemon's time-ordered ids (UUIDv7), one with random v4 UUIDs; then appends of three events (a
 * journaled message and two facts) to a new stream each (named at random, as turns are), alternating
 * between the two logs in rotating order. µs per append, the median over every append of every
 * rep; value time-ordered, baseline random.
 */
import { randomIds, timeOrderedIds } from '../actors/clock/systemClock.ts';
import { SqliteEventStore } from '../adapters/sqlite/sqliteEventStore.ts';
import { type IdSource, VirtualClock } from '../events/index.ts';
import type { BenchContext } from './context.ts';
import { makeFigure, type Figure } from './figures.ts';
import { log, median } from './measure.ts';
import { BENCH_AT, type BenchEvent, benchCatalog, noteEvent } from './workload.ts';

const FILL_BATCH = 1_000;
const EVENTS_PER_APPEND = 3;

type Side = Readonly<{ store: SqliteEventStore<BenchEvent>; times: number[] }>;

const openSide = (path: string, ids: IdSource): Side => ({
  store: SqliteEventStore.open<BenchEvent>(path, { catalog: benchCatalog(), clock: new VirtualClock(BENCH_AT), ids }),
  times: [],
});

/** `events` notes in appends of FILL_BATCH, each to a stream of its own (named at random on both sides, as turns are). */
const fill = async (side: Side, events: number): Promise<void> => {
  for (let from = 0; from < events; from += FILL_BATCH) {
    const batch = Array.from({ length: Math.min(FILL_BATCH, events - from) }, (_, i) => noteEvent(from + i));
    await side.store.append(`fill-${randomIds.next()}`, batch);
  }
};

const timedAppend = async (side: Side, i: number): Promise<void> => {
  const events = Array.from({ length: EVENTS_PER_APPEND }, (_, k) => noteEvent(i * EVENTS_PER_APPEND + k));
  // Turn streams are named by the random ids the daemon gives turns, on both sides.
  const stream = `turn-${randomIds.next()}`;
  const t0 = performance.now();
  await side.store.append(stream, events);
  side.times.push((performance.now() - t0) * 1000);
};

export const appendIds = async (ctx: BenchContext): Promise<Figure> => {
  const logSize = ctx.events * 5;
  const appends = ctx.appends;
  const paths = [ctx.temp.file('ids-ordered'), ctx.temp.file('ids-random')] as const;
  const ordered = openSide(paths[0], timeOrderedIds);
  const random = openSide(paths[1], randomIds);
  try {
    log(`eventStore.append.ids: filling two logs of ${logSize} events`);
    await fill(ordered, logSize);
    await fill(random, logSize);
    for (let rep = 0; rep <= ctx.reps; rep++) {
      // Rep 0 warms up; its times are dropped.
      if (rep === 1) for (const side of [ordered, random]) side.times.length = 0;
      for (let i = 0; i < appends; i++) {
        const pair = (i + rep) % 2 === 0 ? [ordered, random] : [random, ordered];
        for (const side of pair) await timedAppend(side, i);
      }
      if (rep > 0)
        log(
          `eventStore.append.ids: rep ${rep}/${ctx.reps}: ordered ${median(ordered.times).toFixed(0)} µs, random ${median(random.times).toFixed(0)} µs`,
        );
    }
    const value = median(ordered.times);
    const baseline = median(random.times);
    return makeFigure('eventStore.append.ids', 'µs/append (lower is better)', value, baseline, {
      note: `${appends} appends of ${EVENTS_PER_APPEND} events per rep to logs of ${logSize} events; time-ordered ids (the daemon's) vs random v4 UUIDs; median of every append of ${ctx.reps} reps`,
    });
  } finally {
    await ordered.store.close();
    await random.store.close();
    for (const path of paths) ctx.temp.remove(path);
  }
};
