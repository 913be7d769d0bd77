/**
 * What the bench appends: a bench-only event type spread over ~100 streams, a few kernel
 * events in between, and the two ways to write them (the store, and raw better-sqlite3).
 */
import type { Statement } from 'better-sqlite3';
import { EVENT_LOG_DDL } from '../adapters/sqlite/eventTables.ts';
import { openDatabase, type SqliteDatabase } from '../adapters/sqlite/openDatabase.ts';
import { SqliteEventStore } from '../adapters/sqlite/sqliteEventStore.ts';
import {
  createDefaultCatalog,
  defineEvent,
  KERNEL_STREAM,
  schema as s,
  SequentialIds,
  VirtualClock,
  type EventCatalog,
  type EventOf,
  type HologramEvent,
  type NewEventOf,
} from '../events/index.ts';

export const BENCH_TYPE = 'BenchNoted' as const;
export const BENCH_STREAMS = 100;
export const BENCH_AT = 1_700_000_000_000;

export const benchNoted = defineEvent(BENCH_TYPE, s.object({ text: s.string(), n: s.integer() }));

/** What the bench's log holds: the build's events and the bench's own. */
export type BenchEvent = HologramEvent | EventOf<typeof benchNoted>;

export const benchCatalog = (): EventCatalog => createDefaultCatalog().add(benchNoted);

export const benchStream = (i: number): string => `bench-${i % BENCH_STREAMS}`;

export const notePayload = (i: number): { text: string; n: number } => ({ text: `note ${i}: the quick brown fox`, n: i });

export const noteEvent = (i: number): NewEventOf<BenchEvent> => ({ type: BENCH_TYPE, data: notePayload(i) });

/** Appends note `i` alone to its stream: one awaited, durable commit. */
export const appendNote = (store: SqliteEventStore<BenchEvent>, i: number): Promise<unknown> =>
  store.append(benchStream(i), [noteEvent(i)], { expectedVersion: Math.floor(i / BENCH_STREAMS) });

/** A store of the build's events only, for the figures that run the daemon's actors. */
export const openHologramStore = (path: string): SqliteEventStore =>
  SqliteEventStore.open(path, { catalog: benchCatalog(), clock: new VirtualClock(BENCH_AT), ids: new SequentialIds('bench') });

export const openStore = (path: string): SqliteEventStore<BenchEvent> =>
  SqliteEventStore.open<BenchEvent>(path, { catalog: benchCatalog(), clock: new VirtualClock(BENCH_AT), ids: new SequentialIds('bench') });

/** A bare events table opened like the store opens it, with the raw INSERT the baselines use. */
export type RawEventLog = Readonly<{ db: SqliteDatabase; insert: Statement }>;

export const openRawEventLog = (path: string): RawEventLog => {
  const db = openDatabase(path);
  db.exec(EVENT_LOG_DDL);
  const insert = db.prepare(
    'INSERT INTO events (seq, stream, version, id, type, schema_version, at, causation, correlation, data) ' +
      'VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)',
  );
  return { db, insert };
};

/** One kernel "run": boot, modules up (one fails), modules down, stop. 23 events. */
const kernelRun = (run: number): NewEventOf<BenchEvent>[] => {
  const modules = Array.from({ length: 10 }, (_, j) => `module-${j}`);
  return [
    { type: 'KernelStarted', data: { pid: 1000 + run, layers: [modules.slice(0, 5), modules.slice(5)], dataDir: '/var/lib/hologram' } },
    ...modules.map((module, j) => ({
      type: 'ModuleStarted' as const,
      data: { module, layer: j < 5 ? 0 : 1, provides: [`facility-${j}`] },
    })),
    { type: 'ModuleFailed', data: { module: 'module-flaky', layer: 1, error: 'boot timed out', code: 'TIMEOUT' } },
    ...modules.map((module, j) => ({
      type: 'ModuleStopped' as const,
      data: j === 3 ? { module, error: 'stopped with pending work' } : { module },
    })),
    { type: 'KernelStopped', data: { reason: `run ${run} over` } },
  ];
};

/** Every `KERNEL_EVERY`-th event of the mixed log is a kernel event (about 3%). */
const KERNEL_EVERY = 33;

/** The mixed log in order: notes round-robin over the bench streams, kernel runs interleaved. */
export function* mixedLog(total: number): Generator<{ stream: string; event: NewEventOf<BenchEvent> }> {
  let note = 0;
  let kernel: NewEventOf<BenchEvent>[] = [];
  let run = 0;
  for (let i = 1; i <= total; i++) {
    if (i % KERNEL_EVERY === 0) {
      if (kernel.length === 0) kernel = kernelRun(run++);
      yield { stream: KERNEL_STREAM, event: kernel.shift()! };
    } else {
      yield { stream: benchStream(note), event: noteEvent(note) };
      note += 1;
    }
  }
}
