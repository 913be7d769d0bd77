/**
 * Model-based test of the EventStore contract (fast-check `commands` + `asyncModelRun`),
 * run against every dialect: random sequences of appends (with every kind of expected
 * version), retries, reused ids, concurrent appends and reads must agree with a plain model,
 * and after every step the log must have gapless seqs and contiguous stream versions.
 *
 * `FC_RUNS=n` raises the number of runs. To replay a counterexample, set `FC_SEED`, `FC_PATH`
 * (both printed by fast-check on a failure) and `FC_REPLAY_PATH` (the `replayPath` comment
 * after the counterexample's commands).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { openDatabase } from '../../adapters/sqlite/openDatabase.ts';
import { SqliteEventStore } from '../../adapters/sqlite/sqliteEventStore.ts';
import {
  DuplicateEventId,
  InMemoryEventStore,
  InvalidEventPayload,
  isExpectedVersionConflict,
  SequentialIds,
  VirtualClock,
  type AppendOptions,
  type AppendResult,
  type EventStore,
  type ExpectedVersion,
  type NewEvent,
  type ReadAllOptions,
  type ReadStreamOptions,
  type AnyEvent,
} from '../../events/index.ts';
import {
  commitAppend,
  decideAppend,
  emptyModel,
  freshId,
  MODEL_CLOCK_MS,
  modelReadAll,
  modelReadStream,
  streamVersion,
  type EventLogModel,
} from '../support/eventLogModel.ts';
import { createTestCatalog } from '../support/testCatalog.ts';

const RUNS = Number(process.env.FC_RUNS ?? 100);
const replay = {
  ...(process.env.FC_SEED ? { seed: Number(process.env.FC_SEED) } : {}),
  ...(process.env.FC_PATH ? { path: process.env.FC_PATH } : {}),
};
const replayPath = process.env.FC_REPLAY_PATH ? { replayPath: process.env.FC_REPLAY_PATH } : {};

const STREAMS = ['a', 'b', 'c', 'd'] as const;
type Cmd = fc.AsyncCommand<EventLogModel, EventStore<AnyEvent>>;

// ---------------------------------------------------------------- what commands are made of

type EventSpec = Readonly<{
  type: 'TestNoted' | 'TestRenamed';
  n: number;
  /** `undefined`: no `text` key at all. */
  text: string | null | undefined;
  name: string;
  at: number | undefined;
  causation: string | undefined;
  correlation: string | undefined;
  /** false: the store chooses the id. */
  withId: boolean;
}>;

const eventSpecArb: fc.Arbitrary<EventSpec> = fc.record({
  type: fc.constantFrom('TestNoted', 'TestRenamed'),
  n: fc.oneof(fc.integer(), fc.maxSafeInteger()),
  text: fc.option(fc.oneof(fc.string({ unit: 'grapheme', maxLength: 12 }), fc.constant(null)), { nil: undefined }),
  name: fc.string({ unit: 'grapheme', maxLength: 12 }),
  at: fc.option(fc.nat(), { nil: undefined }),
  causation: fc.option(fc.string({ maxLength: 6 }), { nil: undefined }),
  correlation: fc.option(fc.string({ maxLength: 6 }), { nil: undefined }),
  withId: fc.oneof({ weight: 5, arbitrary: fc.constant(true) }, { weight: 1, arbitrary: fc.constant(false) }),
});

const dataFor = (type: string, spec: EventSpec): unknown =>
  type === 'TestNoted' ? { n: spec.n, ...(spec.text === undefined ? {} : { text: spec.text }) } : { fullName: spec.name };

const toNewEvent = (model: EventLogModel, spec: EventSpec): NewEvent => ({
  type: spec.type,
  data: dataFor(spec.type, spec),
  ...(spec.withId ? { id: freshId(model) } : {}),
  ...(spec.at === undefined ? {} : { at: spec.at }),
  ...(spec.causation === undefined ? {} : { causation: spec.causation }),
  ...(spec.correlation === undefined ? {} : { correlation: spec.correlation }),
});

/** An expected version, resolved against the model when the command runs. */
type ExpectedSpec = Readonly<{ kind: 'omitted' | 'any' | 'no_stream' | 'stream_exists' | 'exact' } | { kind: 'wrong'; delta: number }>;

const expectedSpecArb: fc.Arbitrary<ExpectedSpec> = fc.oneof(
  { weight: 2, arbitrary: fc.constantFrom<ExpectedSpec>({ kind: 'omitted' }, { kind: 'any' }) },
  { weight: 3, arbitrary: fc.constant<ExpectedSpec>({ kind: 'exact' }) },
  { weight: 2, arbitrary: fc.constantFrom<ExpectedSpec>({ kind: 'no_stream' }, { kind: 'stream_exists' }) },
  { weight: 1, arbitrary: fc.integer({ min: 1, max: 3 }).map((delta): ExpectedSpec => ({ kind: 'wrong', delta })) },
);

const resolveExpected = (spec: ExpectedSpec, current: number): ExpectedVersion | undefined => {
  switch (spec.kind) {
    case 'omitted':
      return undefined;
    case 'exact':
      return current;
    case 'wrong':
      return current - spec.delta >= 0 ? current - spec.delta : current + spec.delta;
    default:
      return spec.kind;
  }
};

const describeSpec = (spec: ExpectedSpec): string => (spec.kind === 'wrong' ? `wrong(${spec.delta})` : spec.kind);
const optionsFor = (expected: ExpectedVersion | undefined): AppendOptions => (expected === undefined ? {} : { expectedVersion: expected });

// ---------------------------------------------------------------- checks shared by commands

/** Invariants of the whole log, checked after every command. */
const checkInvariants = async (model: EventLogModel, real: EventStore<AnyEvent>): Promise<void> => {
  const all = await real.readAll();
  expect(all).toEqual(model.all);
  expect(all.map((e) => e.seq)).toEqual(Array.from({ length: all.length }, (_, i) => i + 1));
  expect(await real.headSeq()).toBe(model.all.length);
  for (const stream of STREAMS) {
    const events = await real.readStream(stream);
    expect(events.map((e) => e.version)).toEqual(Array.from({ length: events.length }, (_, i) => i + 1));
    expect(events).toEqual(model.streams.get(stream) ?? []);
    expect(await real.streamVersion(stream)).toBe(streamVersion(model, stream));
  }
};

/**
 * Applies one append to the model and checks the real store's settled promise against it.
 * `decideAppend` says what must happen; the model changes only when the real append stored.
 */
const checkAppend = (
  model: EventLogModel,
  stream: string,
  batch: readonly NewEvent[],
  expected: ExpectedVersion | undefined,
  settled: PromiseSettledResult<AppendResult<AnyEvent>>,
): void => {
  const outcome = decideAppend(model, stream, batch, expected ?? 'any');
  switch (outcome.kind) {
    case 'conflict': {
      expect(settled.status, `append to '${stream}' expecting ${String(expected)} must conflict`).toBe('rejected');
      const error = (settled as PromiseRejectedResult).reason;
      expect(isExpectedVersionConflict(error), String(error)).toBe(true);
      expect(error).toMatchObject({ stream, expected: outcome.expected, actual: outcome.actual });
      return;
    }
    case 'duplicateId': {
      expect(settled.status, `append to '${stream}' reusing an id must be refused`).toBe('rejected');
      expect((settled as PromiseRejectedResult).reason).toBeInstanceOf(DuplicateEventId);
      return;
    }
    case 'alreadyStored':
    case 'stored': {
      if (settled.status === 'rejected')
        throw new Error(`append to '${stream}' must succeed (${outcome.kind}) but failed`, { cause: settled.reason });
      const result = settled.value;
      expect(result).toEqual({
        nextVersion: outcome.nextVersion,
        lastSeq: outcome.lastSeq,
        alreadyStored: outcome.kind === 'alreadyStored',
        events: outcome.events.map((e) => (e.id === undefined ? { ...e, id: expect.any(String) } : e)),
      });
      if (outcome.kind === 'stored')
        commitAppend(
          model,
          stream,
          outcome.events,
          result.events.map((e) => e.id),
        );
      return;
    }
  }
};

// ---------------------------------------------------------------- commands

class Append implements Cmd {
  constructor(
    readonly stream: string,
    readonly specs: readonly EventSpec[],
    readonly expected: ExpectedSpec,
  ) {}
  check = () => true;
  async run(model: EventLogModel, real: EventStore<AnyEvent>): Promise<void> {
    const batch = this.specs.map((spec) => toNewEvent(model, spec));
    const expected = resolveExpected(this.expected, streamVersion(model, this.stream));
    const [settled] = await Promise.allSettled([real.append(this.stream, batch, optionsFor(expected))]);
    checkAppend(model, this.stream, batch, expected, settled!);
    await checkInvariants(model, real);
  }
  toString = () => `Append(${this.stream}, ${this.specs.length} event(s), ${describeSpec(this.expected)})`;
}

/** Re-appends a stored batch, exactly as first sent: a retry, whatever the expected version. */
class Reappend implements Cmd {
  constructor(
    readonly pick: number,
    readonly expected: ExpectedSpec,
  ) {}
  check = (model: Readonly<EventLogModel>) => model.batches.length > 0;
  async run(model: EventLogModel, real: EventStore<AnyEvent>): Promise<void> {
    const { stream, events } = model.batches[this.pick % model.batches.length]!;
    const originals = events.map((e) => model.all.find((r) => r.id === e.id)!);
    const expected = resolveExpected(this.expected, streamVersion(model, stream));
    const result = await real.append(stream, events, optionsFor(expected));
    expect(result.alreadyStored).toBe(true);
    expect(result.events).toEqual(originals);
    expect(result.lastSeq).toBe(originals[originals.length - 1]!.seq);
    expect(result.nextVersion).toBe(streamVersion(model, stream));
    await checkInvariants(model, real);
  }
  toString = () => `Reappend(batch #${this.pick}, ${describeSpec(this.expected)})`;
}

type Reuse = 'otherStream' | 'otherType' | 'storedThenFresh' | 'freshThenStored';

/** Uses a stored id for a different event: refused with DuplicateEventId, nothing appended. */
class ReuseIdElsewhere implements Cmd {
  constructor(
    readonly pick: number,
    readonly how: Reuse,
    readonly otherStream: number,
    readonly filler: EventSpec,
    readonly expected: ExpectedSpec,
  ) {}
  check = (model: Readonly<EventLogModel>) => model.all.length > 0;
  async run(model: EventLogModel, real: EventStore<AnyEvent>): Promise<void> {
    const original = model.all[this.pick % model.all.length]!;
    const same: NewEvent = { type: original.type, data: original.data, id: original.id };
    const fresh = { ...toNewEvent(model, this.filler), id: freshId(model) };
    let stream = original.stream;
    let batch: NewEvent[];
    switch (this.how) {
      case 'otherStream': {
        const others = STREAMS.filter((s) => s !== original.stream);
        stream = others[this.otherStream % others.length]!;
        batch = [same];
        break;
      }
      case 'otherType': {
        const type = original.type === 'TestNoted' ? 'TestRenamed' : 'TestNoted';
        batch = [{ type, data: dataFor(type, this.filler), id: original.id }];
        break;
      }
      case 'storedThenFresh':
        batch = [same, fresh];
        break;
      case 'freshThenStored':
        batch = [fresh, same];
        break;
    }
    const expected = resolveExpected(this.expected, streamVersion(model, stream));
    // A stored first id is a duplicate whatever the version; a later one only once the version matched.
    expect(['duplicateId', 'conflict']).toContain(decideAppend(model, stream, batch, expected ?? 'any').kind);
    const [settled] = await Promise.allSettled([real.append(stream, batch, optionsFor(expected))]);
    checkAppend(model, stream, batch, expected, settled!);
    await checkInvariants(model, real);
  }
  toString = () => `ReuseIdElsewhere(event #${this.pick}, ${this.how}, ${describeSpec(this.expected)})`;
}

type Bad = 'nNotInteger' | 'nMissing' | 'dataNull' | 'extraField';

/** A batch with one payload that does not match its type: refused, nothing of it appended. */
class AppendInvalid implements Cmd {
  constructor(
    readonly stream: string,
    readonly good: EventSpec,
    readonly bad: Bad,
    readonly extraKey: string,
  ) {}
  check = () => true;
  async run(model: EventLogModel, real: EventStore<AnyEvent>): Promise<void> {
    const data =
      this.bad === 'nNotInteger'
        ? { n: 1.5 }
        : this.bad === 'nMissing'
          ? { text: 'x' }
          : this.bad === 'dataNull'
            ? null
            : { n: 1, [this.extraKey]: 1 }; // a computed key: '__proto__' becomes an own field
    const batch = [toNewEvent(model, this.good), { type: 'TestNoted', data, id: freshId(model) }];
    await expect(real.append(this.stream, batch)).rejects.toThrow(InvalidEventPayload);
    await checkInvariants(model, real);
  }
  toString = () => `AppendInvalid(${this.stream}, ${this.bad}${this.bad === 'extraField' ? ` '${this.extraKey}'` : ''})`;
}

class AppendEmpty implements Cmd {
  constructor(readonly stream: string) {}
  check = () => true;
  async run(model: EventLogModel, real: EventStore<AnyEvent>): Promise<void> {
    await expect(real.append(this.stream, [])).rejects.toThrow(RangeError);
    await checkInvariants(model, real);
  }
  toString = () => `AppendEmpty(${this.stream})`;
}

type ConcurrentItem = Readonly<
  | { kind: 'new'; stream: string; specs: readonly EventSpec[]; expected: ExpectedSpec }
  /** The same batch as an earlier item of this group (a retry racing its original). */
  | { kind: 'repeat'; of: number; expected: ExpectedSpec }
  | { kind: 'invalid'; stream: string }
>;

/**
 * Issues 2–4 appends without awaiting in between. Expected versions are resolved against the
 * state before the first one, so two `exact` appends to one stream race; the model applies
 * them in issue order.
 */
class ConcurrentAppends implements Cmd {
  constructor(readonly items: readonly ConcurrentItem[]) {}
  check = () => true;
  async run(model: EventLogModel, real: EventStore<AnyEvent>): Promise<void> {
    const issued: { stream: string; batch: readonly NewEvent[]; expected: ExpectedVersion | undefined; valid: boolean }[] = [];
    for (const item of this.items) {
      if (item.kind === 'invalid') {
        issued.push({
          stream: item.stream,
          batch: [{ type: 'TestNoted', data: { n: 'x' }, id: freshId(model) }],
          expected: undefined,
          valid: false,
        });
      } else if (item.kind === 'repeat' && issued.length > 0) {
        const earlier = issued[item.of % issued.length]!;
        issued.push({ ...earlier, expected: resolveExpected(item.expected, streamVersion(model, earlier.stream)) });
      } else if (item.kind === 'new') {
        const batch = item.specs.map((spec) => toNewEvent(model, spec));
        issued.push({
          stream: item.stream,
          batch,
          expected: resolveExpected(item.expected, streamVersion(model, item.stream)),
          valid: true,
        });
      }
    }
    const settled = await Promise.allSettled(issued.map((i) => real.append(i.stream, i.batch, optionsFor(i.expected))));
    issued.forEach((item, i) => {
      if (!item.valid) {
        expect(settled[i]!.status).toBe('rejected');
        expect((settled[i] as PromiseRejectedResult).reason).toBeInstanceOf(InvalidEventPayload);
      } else {
        checkAppend(model, item.stream, item.batch, item.expected, settled[i]!);
      }
    });
    await checkInvariants(model, real);
  }
  toString = () =>
    `ConcurrentAppends(${this.items
      .map((i) =>
        i.kind === 'new'
          ? `${i.stream}:${i.specs.length}@${describeSpec(i.expected)}`
          : i.kind === 'repeat'
            ? `repeat#${i.of}@${describeSpec(i.expected)}`
            : `invalid:${i.stream}`,
      )
      .join(', ')})`;
}

class ReadStream implements Cmd {
  constructor(
    readonly stream: string,
    readonly options: ReadStreamOptions,
  ) {}
  check = () => true;
  async run(model: EventLogModel, real: EventStore<AnyEvent>): Promise<void> {
    expect(await real.readStream(this.stream, this.options)).toEqual(modelReadStream(model, this.stream, this.options));
  }
  toString = () => `ReadStream(${this.stream}, ${JSON.stringify(this.options)})`;
}

class ReadAll implements Cmd {
  constructor(readonly options: ReadAllOptions) {}
  check = () => true;
  async run(model: EventLogModel, real: EventStore<AnyEvent>): Promise<void> {
    expect(await real.readAll(this.options)).toEqual(modelReadAll(model, this.options));
  }
  toString = () => `ReadAll(${JSON.stringify(this.options)})`;
}

// ---------------------------------------------------------------- arbitraries of commands

const streamArb = fc.constantFrom(...STREAMS);
const batchArb = fc.array(eventSpecArb, { minLength: 1, maxLength: 3 });
/** Drops the keys whose value is undefined (options must not carry `key: undefined`). */
const defined = <T extends object>(o: T): T => Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as T;

const concurrentItemArb: fc.Arbitrary<ConcurrentItem> = fc.oneof(
  { weight: 6, arbitrary: fc.record({ kind: fc.constant('new' as const), stream: streamArb, specs: batchArb, expected: expectedSpecArb }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('repeat' as const), of: fc.nat(3), expected: expectedSpecArb }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('invalid' as const), stream: streamArb }) },
);

const appendArb = fc.tuple(streamArb, batchArb, expectedSpecArb).map(([s, b, e]) => new Append(s, b, e));

const commandArbs: fc.Arbitrary<Cmd>[] = [
  appendArb,
  appendArb,
  appendArb,
  fc.tuple(fc.nat(), expectedSpecArb).map(([p, e]) => new Reappend(p, e)),
  fc
    .tuple(
      fc.nat(),
      fc.constantFrom<Reuse>('otherStream', 'otherType', 'storedThenFresh', 'freshThenStored'),
      fc.nat(),
      eventSpecArb,
      expectedSpecArb,
    )
    .map(([p, how, o, f, e]) => new ReuseIdElsewhere(p, how, o, f, e)),
  fc
    .tuple(
      streamArb,
      eventSpecArb,
      fc.constantFrom<Bad>('nNotInteger', 'nMissing', 'dataNull', 'extraField'),
      fc.constantFrom('extra', 'constructor', 'toString', '__proto__', 'hasOwnProperty', 'valueOf'),
    )
    .map(([s, g, b, k]) => new AppendInvalid(s, g, b, k)),
  streamArb.map((s) => new AppendEmpty(s)),
  fc.array(concurrentItemArb, { minLength: 2, maxLength: 4 }).map((items) => new ConcurrentAppends(items)),
  fc
    .record({
      stream: fc.constantFrom(...STREAMS, 'missing'),
      fromVersion: fc.option(fc.integer({ min: -1, max: 8 }), { nil: undefined }),
      maxCount: fc.option(fc.nat(5), { nil: undefined }),
    })
    .map(({ stream, ...options }) => new ReadStream(stream, defined(options))),
  fc
    .record({
      fromSeq: fc.option(fc.integer({ min: -1, max: 25 }), { nil: undefined }),
      toSeq: fc.option(fc.integer({ min: 0, max: 25 }), { nil: undefined }),
      maxCount: fc.option(fc.nat(8), { nil: undefined }),
      types: fc.option(fc.subarray(['TestNoted', 'TestRenamed', 'NeverAppended']), { nil: undefined }),
      stream: fc.option(fc.constantFrom(...STREAMS, 'missing'), { nil: undefined }),
    })
    .map((options) => new ReadAll(defined(options))),
];

// ---------------------------------------------------------------- dialects

type Opened = { store: EventStore<AnyEvent>; cleanup?: () => void };
const storeOptions = () => ({ catalog: createTestCatalog(), clock: new VirtualClock(MODEL_CLOCK_MS), ids: new SequentialIds() });

const dialects: { name: string; runs: number; open: () => Opened }[] = [
  {
    name: 'in-memory',
    runs: RUNS,
    open: () => {
      const { catalog, clock, ids } = storeOptions();
      return { store: new InMemoryEventStore<AnyEvent>(catalog, clock, ids) };
    },
  },
  {
    name: 'sqlite :memory:',
    runs: RUNS,
    open: () => ({ store: new SqliteEventStore<AnyEvent>(openDatabase(':memory:'), storeOptions()) }),
  },
  {
    name: 'sqlite file',
    runs: RUNS,
    open: () => {
      const dir = mkdtempSync(join(tmpdir(), 'hologram-prop-'));
      return {
        store: SqliteEventStore.open<AnyEvent>(join(dir, 'events.db'), storeOptions()),
        cleanup: () => rmSync(dir, { recursive: true, force: true }),
      };
    },
  },
];

describe.each(dialects)('EventStore model: $name', ({ runs, open }) => {
  it(`agrees with the model over random command sequences (${runs} runs)`, { timeout: Math.max(60_000, runs * 600) }, async () => {
    await fc.assert(
      fc.asyncProperty(fc.commands(commandArbs, { maxCommands: 60, size: 'medium', ...replayPath }), async (commands) => {
        const { store, cleanup } = open();
        try {
          await fc.asyncModelRun(() => ({ model: emptyModel(), real: store }), commands);
        } finally {
          await store.close();
          cleanup?.();
        }
      }),
      { numRuns: runs, ...replay },
    );
  });
});
