/**
 * Append figures: the SqliteEventStore against raw better-sqlite3 inserts of the same rows
 * (same DDL, same pragmas, payload msgpack-encoded inside the timed part on both sides).
 */
import type { SqliteEventStore } from '../adapters/sqlite/sqliteEventStore.ts';
import { encodePayload, type NewEventOf } from '../events/index.ts';
import type { BenchContext } from './context.ts';
import { makeFigure, type Figure } from './figures.ts';
import { measurePair, median, type TimedRun } from './measure.ts';
import {
  appendNote,
  BENCH_AT,
  BENCH_STREAMS,
  BENCH_TYPE,
  type BenchEvent,
  benchStream,
  noteEvent,
  notePayload,
  openRawEventLog,
  openStore,
} from './workload.ts';

const BATCH = 1_000;
const CONCURRENT_CHUNK = 100;

/** Opens a fresh store, times `body`, checks every event landed, removes the file. */
const timedStore =
  (ctx: BenchContext, label: string, expected: number, body: (store: SqliteEventStore<BenchEvent>) => Promise<void>): TimedRun =>
  async () => {
    const path = ctx.temp.file(label);
    const store = openStore(path);
    try {
      const t0 = performance.now();
      await body(store);
      const ms = performance.now() - t0;
      const head = await store.headSeq();
      if (head !== expected) throw new Error(`${label}: expected ${expected} events in the log, found ${head}`);
      return ms;
    } finally {
      await store.close();
      ctx.temp.remove(path);
    }
  };

/** Raw baseline: one autocommit INSERT per event (each its own durable commit). */
const rawAutocommit =
  (ctx: BenchContext, n: number): TimedRun =>
  async () => {
    const path = ctx.temp.file('raw-single');
    const { db, insert } = openRawEventLog(path);
    try {
      const t0 = performance.now();
      for (let i = 0; i < n; i++) {
        insert.run(
          i + 1,
          benchStream(i),
          Math.floor(i / BENCH_STREAMS) + 1,
          `raw-${i + 1}`,
          BENCH_TYPE,
          1,
          BENCH_AT,
          null,
          null,
          encodePayload(notePayload(i)),
        );
      }
      return performance.now() - t0;
    } finally {
      db.close();
      ctx.temp.remove(path);
    }
  };

/** Figure 1: awaited single-event appends, each its own commit. */
export const appendSingle = async (ctx: BenchContext): Promise<Figure> => {
  const n = ctx.appends;
  const value = timedStore(ctx, 'single', n, async (store) => {
    for (let i = 0; i < n; i++) await appendNote(store, i);
  });
  const result = await measurePair('eventStore.append.single', n, ctx.reps, { baseline: rawAutocommit(ctx, n), value });
  return makeFigure('eventStore.append.single', 'events/s', result.value, result.baseline, {
    ratio: result.ratio,
    note: `${n} awaited appends of 1 event vs ${n} autocommit INSERTs; median of ${ctx.reps}`,
  });
};

/** Milliseconds of one durable commit: the median time of `n` awaited single-event appends to a fresh store. */
export const durableCommitMs = async (ctx: BenchContext, n: number): Promise<number> => {
  const path = ctx.temp.file('commit');
  const store = openStore(path);
  try {
    const times: number[] = [];
    for (let i = 0; i < n; i++) {
      const t0 = performance.now();
      await appendNote(store, i);
      times.push(performance.now() - t0);
    }
    return median(times);
  } finally {
    await store.close();
    ctx.temp.remove(path);
  }
};

/** Figure 3: single-event appends issued in chunks without awaiting each: group commit. */
export const appendConcurrent = async (ctx: BenchContext): Promise<Figure> => {
  const n = ctx.appends;
  const value = timedStore(ctx, 'concurrent', n, async (store) => {
    for (let from = 0; from < n; from += CONCURRENT_CHUNK) {
      const pending: Promise<unknown>[] = [];
      for (let i = from; i < Math.min(n, from + CONCURRENT_CHUNK); i++) {
        pending.push(appendNote(store, i));
      }
      await Promise.all(pending);
    }
  });
  const result = await measurePair('eventStore.append.concurrent', n, ctx.reps, { baseline: rawAutocommit(ctx, n), value });
  return makeFigure('eventStore.append.concurrent', 'events/s', result.value, result.baseline, {
    ratio: result.ratio,
    note: `${n} appends of 1 event, Promise.all of ${CONCURRENT_CHUNK} at a time, vs ${n} autocommit INSERTs; median of ${ctx.reps}`,
  });
};

type Batch = Readonly<{ stream: string; firstSeq: number; firstVersion: number; events: NewEventOf<BenchEvent>[] }>;

/** `n` notes cut into batches of `BATCH`, batch k going to stream k mod BENCH_STREAMS. */
const buildBatches = (n: number): Batch[] => {
  const versions = new Map<string, number>();
  const batches: Batch[] = [];
  for (let from = 0, k = 0; from < n; from += BATCH, k++) {
    const stream = benchStream(k);
    const events: NewEventOf<BenchEvent>[] = [];
    for (let i = from; i < Math.min(n, from + BATCH); i++) events.push(noteEvent(i));
    const version = versions.get(stream) ?? 0;
    versions.set(stream, version + events.length);
    batches.push({ stream, firstSeq: from + 1, firstVersion: version + 1, events });
  }
  return batches;
};

/** Figure 2: batches of 1,000 events per append vs raw transactions of 1,000 INSERTs. */
export const appendBatched = async (ctx: BenchContext): Promise<Figure> => {
  const n = ctx.events;
  const batches = buildBatches(n);
  const value = timedStore(ctx, 'batched', n, async (store) => {
    for (const batch of batches) {
      await store.append(batch.stream, batch.events, { expectedVersion: batch.firstVersion - 1 });
    }
  });
  const baseline: TimedRun = async () => {
    const path = ctx.temp.file('raw-batched');
    const { db, insert } = openRawEventLog(path);
    const insertBatch = db.transaction((batch: Batch) => {
      const { stream, firstSeq, firstVersion, events } = batch;
      for (let i = 0; i < events.length; i++) {
        const seq = firstSeq + i;
        insert.run(seq, stream, firstVersion + i, `raw-${seq}`, BENCH_TYPE, 1, BENCH_AT, null, null, encodePayload(events[i]!.data));
      }
    });
    try {
      const t0 = performance.now();
      for (const batch of batches) insertBatch.immediate(batch);
      return performance.now() - t0;
    } finally {
      db.close();
      ctx.temp.remove(path);
    }
  };
  const result = await measurePair('eventStore.append.batched', n, ctx.reps, { baseline, value });
  return makeFigure('eventStore.append.batched', 'events/s', result.value, result.baseline, {
    ratio: result.ratio,
    target: 0.8,
    note: `${n} events, ${BATCH} per append vs ${BATCH} INSERTs per transaction; median of ${ctx.reps}`,
  });
};
