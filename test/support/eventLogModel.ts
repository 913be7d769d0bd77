/**
 * A plain model of the event log for model-based tests: the global list, each stream's
 * events and the batches that were stored. It restates the append rules independently of
 * `events/appendRules.ts`, so a bug there is not copied into the oracle.
 */
import type { ExpectedVersion, NewEvent, ReadAllOptions, ReadStreamOptions, RecordedEvent } from '../../events/index.ts';

/** Time the store's clock gives an event appended without `at`. */
export const MODEL_CLOCK_MS = 1_000;

/** Schema version each test type is declared at (see testCatalog.ts). */
const DECLARED_VERSION: Record<string, number> = { TestNoted: 1, TestRenamed: 2 };

export type StoredBatch = Readonly<{ stream: string; events: readonly NewEvent[] }>;

export type EventLogModel = {
  all: RecordedEvent[];
  streams: Map<string, RecordedEvent[]>;
  /** Every batch that was stored, with the ids the store gave it: candidates for a retry. */
  batches: StoredBatch[];
  /** Counter for the ids the test hands out (`m-1`, `m-2`, ...). */
  nextId: number;
};

export const emptyModel = (): EventLogModel => ({ all: [], streams: new Map(), batches: [], nextId: 0 });

export const freshId = (model: EventLogModel): string => `m-${++model.nextId}`;

export const streamVersion = (model: EventLogModel, stream: string): number => model.streams.get(stream)?.length ?? 0;

export const findById = (model: EventLogModel, id: string): RecordedEvent | undefined => model.all.find((e) => e.id === id);

export type AppendOutcome =
  | { kind: 'stored'; events: RecordedEvent[]; nextVersion: number; lastSeq: number }
  | { kind: 'alreadyStored'; events: RecordedEvent[]; nextVersion: number; lastSeq: number }
  | { kind: 'conflict'; expected: ExpectedVersion; actual: number }
  | { kind: 'duplicateId' };

const versionMatches = (expected: ExpectedVersion, actual: number): boolean => {
  switch (expected) {
    case 'any':
      return true;
    case 'no_stream':
      return actual === 0;
    case 'stream_exists':
      return actual > 0;
    default:
      return expected === actual;
  }
};

/**
 * What an append of a valid, non-empty batch must do. The first id decides a retry: when it
 * is stored, the batch must repeat one stored run of events exactly (same stream, consecutive
 * versions, same types and payloads) and then succeeds whatever the expected version, else it
 * is a duplicate. When the first id is new, the expected version is checked, then any other
 * stored id is a duplicate. Events without an id get `id: undefined` here (the store chooses it).
 */
export const decideAppend = (
  model: EventLogModel,
  stream: string,
  batch: readonly NewEvent[],
  expected: ExpectedVersion,
): AppendOutcome => {
  const current = streamVersion(model, stream);
  const stored = batch.map((e) => (e.id === undefined ? undefined : findById(model, e.id)));
  const first = stored[0];
  if (first !== undefined) {
    const retry = stored.every(
      (e, i) =>
        e !== undefined &&
        e.stream === stream &&
        e.type === batch[i]!.type &&
        e.version === first.version + i &&
        JSON.stringify(e.data) === JSON.stringify(batch[i]!.data),
    );
    if (!retry) return { kind: 'duplicateId' };
    const events = stored as RecordedEvent[];
    return { kind: 'alreadyStored', events, nextVersion: current, lastSeq: events[events.length - 1]!.seq };
  }
  if (!versionMatches(expected, current)) return { kind: 'conflict', expected, actual: current };
  if (stored.some((e) => e !== undefined)) return { kind: 'duplicateId' };
  const head = model.all.length;
  const events = batch.map(
    (e, i): RecordedEvent => ({
      seq: head + 1 + i,
      stream,
      version: current + 1 + i,
      id: e.id as string, // undefined when the store chooses; filled in by `commitAppend`
      type: e.type,
      schemaVersion: DECLARED_VERSION[e.type]!,
      at: e.at ?? MODEL_CLOCK_MS,
      causation: e.causation ?? null,
      correlation: e.correlation ?? null,
      data: e.data,
    }),
  );
  return { kind: 'stored', events, nextVersion: current + batch.length, lastSeq: head + batch.length };
};

/** Records a stored batch, taking the ids the store chose for events that had none. */
export const commitAppend = (
  model: EventLogModel,
  stream: string,
  events: readonly RecordedEvent[],
  storedIds: readonly string[],
): void => {
  const withIds = events.map((e, i) => ({ ...e, id: storedIds[i]! }));
  model.all.push(...withIds);
  model.streams.set(stream, [...(model.streams.get(stream) ?? []), ...withIds]);
  model.batches.push({
    stream,
    events: withIds.map((e) => ({
      type: e.type,
      data: e.data,
      id: e.id,
      at: e.at,
      ...(e.causation === null ? {} : { causation: e.causation }),
      ...(e.correlation === null ? {} : { correlation: e.correlation }),
    })),
  });
};

export const modelReadStream = (model: EventLogModel, stream: string, options: ReadStreamOptions): RecordedEvent[] => {
  const from = options.fromVersion ?? 1;
  const events = (model.streams.get(stream) ?? []).filter((e) => e.version >= from);
  return options.maxCount === undefined ? events : events.slice(0, options.maxCount);
};

export const modelReadAll = (model: EventLogModel, options: ReadAllOptions): RecordedEvent[] => {
  const events = model.all.filter(
    (e) =>
      e.seq >= (options.fromSeq ?? 1) &&
      e.seq <= (options.toSeq ?? Number.MAX_SAFE_INTEGER) &&
      (options.types === undefined || options.types.includes(e.type)) &&
      (options.stream === undefined || e.stream === options.stream),
  );
  return options.maxCount === undefined ? events : events.slice(0, options.maxCount);
};
