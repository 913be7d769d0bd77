/**
 * Model-based tests of the input scheduler (fast-check `commands`): random arrivals (queued
 * and interrupts of every level and origin, re-deliveries), completions (of the running task,
 * late and unknown ones), stops and time jumps must agree with a plain model
 * (`test/support/schedulerModel.ts`), and every fact must obey the rules checked by
 * `test/support/schedulerFactLedger.ts` after every message. Each run is then journaled to
 * SQLite: the scheduler projection must give the live view after every message, and
 * `replayJournal` must reproduce every fact. The second property journals through a
 * `JournaledActor` whose task completions arrive through fast-check's scheduler, so they race
 * with arrivals, stops and time.
 *
 * Runs: at least 1,000 command sequences per property; `FC_RUNS=n` raises it. On a failure
 * fast-check prints the seed, the path and the shrunk commands followed by a
 * `/*replayPath="..."*\/` comment (and, for the second property, the scheduler's task log).
 * To replay it: `FC_SEED=<seed> FC_PATH=<path> FC_REPLAY_PATH=<replayPath> npx vitest run
 * test/machines/scheduler.property.test.ts` (add `-t journaled` or `-t 'plain actor'` to run one).
 *
 * Every run also checks that nothing is left due after a message: every message is a decision
 * point, so a cooldown that ended or a backlog deadline that passed is acted on at once.
 *
 * Input ids are unique by contract: the scheduler module refuses an id the read model already
 * knows before it reaches the machine. `FC_REDELIVER_ENDED=1` re-delivers ended ids to the
 * machine itself anyway, to show what the machine alone does with them (it runs them again).
 */
import fc from 'fast-check';
import { createActor } from 'xstate';
import { describe, expect, it } from 'vitest';
import { openDatabase } from '../../adapters/sqlite/openDatabase.ts';
import { SqliteEventStore } from '../../adapters/sqlite/sqliteEventStore.ts';
import { JournaledActor, type Fact } from '../../actors/journal/journaledActor.ts';
import { replayJournal } from '../../actors/journal/replayJournal.ts';
import { ProjectionRunner } from '../../actors/projections/projectionRunner.ts';
import { SqliteReadModelTx } from '../../actors/projections/sqliteReadModelTx.ts';
import {
  createDefaultCatalog,
  InMemoryEventStore,
  SCHEDULER_STREAM,
  SequentialIds,
  VirtualClock,
  type EventStore,
} from '../../events/index.ts';
import {
  nextWakeAt,
  schedulerMachine,
  schedulerViewOf,
  type SchedulerMessage,
  type SchedulerState,
} from '../../machines/scheduler/index.ts';
import { schedulerProjection } from '../../projections/scheduler/schedulerProjection.ts';
import { readSchedulerView } from '../../projections/scheduler/schedulerView.ts';
import { SchedulerFactLedger, type LedgerFact } from '../support/schedulerFactLedger.ts';
import {
  createSchedulerModel,
  decisionsAt,
  endedIds,
  liveIds,
  modelStatuses,
  modelView,
  stepModel,
  type ModelOrigin,
  type SchedulerModel,
} from '../support/schedulerModel.ts';

const RUNS = Math.max(1_000, Number(process.env.FC_RUNS ?? 0));
const replay = {
  ...(process.env.FC_SEED ? { seed: Number(process.env.FC_SEED) } : {}),
  ...(process.env.FC_PATH ? { path: process.env.FC_PATH } : {}),
};
const replayPath = process.env.FC_REPLAY_PATH ? { replayPath: process.env.FC_REPLAY_PATH } : {};
const CHECK_SETTLED = true;
const REDELIVER_ENDED = process.env.FC_REDELIVER_ENDED === '1';

/** A short backlog deadline so time jumps reach it; the cooldown is the default 2 s. */
const CONFIG = { preemptCooldownMs: 2_000, offloadAfterMs: 10_000 } as const;
const MACHINE_INPUT = { config: CONFIG };

type View = ReturnType<typeof schedulerViewOf>;

/** `expect(actual).toEqual(expected)`, with a cheap check first: most calls agree. */
const same = (actual: unknown, expected: unknown, label: string): void => {
  if (JSON.stringify(actual) !== JSON.stringify(expected)) expect(actual, label).toEqual(expected);
};

// ---------------------------------------------------------------- what one run records and checks

/**
 * The test's side of a run: the virtual clock, the model, the fact ledger, and the journal
 * of every message with its facts and the live view after it.
 */
class Harness {
  clock = 0;
  private ids = 0;
  private outcomes = 0;
  readonly model: SchedulerModel = createSchedulerModel(CONFIG, { ignoreEndedIds: REDELIVER_ENDED });
  readonly ledger = new SchedulerFactLedger(CONFIG);
  readonly journal: { message: SchedulerMessage; facts: readonly Fact[]; view: View }[] = [];
  /** The machine's state after the last message. */
  context: SchedulerState | null = null;
  private failure: unknown;

  freshId(): string {
    return `in-${++this.ids}`;
  }

  finish(taskId: string): SchedulerMessage {
    const outcome = (['done', 'done', 'failed', 'cancelled', 'abandoned'] as const)[this.outcomes++ % 5]!;
    return { type: 'task.finish', at: this.clock, taskId, outcome };
  }

  /**
   * Before time moves to `to`: when a tick then would decide something, the machine must
   * have announced a wake-up no later than `to` (the runtime sleeps until `nextWakeAt`).
   */
  checkWake(to: number): void {
    if (this.context === null || decisionsAt(this.model, this.model.now).length > 0) return;
    const due = decisionsAt(this.model, to);
    if (due.length === 0) return;
    const wake = nextWakeAt(this.context);
    expect(wake !== null && wake <= to, `nextWakeAt is ${wake} but a tick at ${to} decides ${due}`).toBe(true);
  }

  /**
   * Checks one processed message: its facts against the rules, the machine against the model.
   * After a first failure every later call throws that one, so it is the one reported even
   * when it happened in a completion racing the commands.
   */
  observe(message: SchedulerMessage, facts: readonly Fact[], snapshot: { context: SchedulerState; value: unknown }): void {
    if (this.failure !== undefined) throw this.failure;
    try {
      this.check(message, facts, snapshot);
    } catch (error) {
      this.failure = error;
      throw error;
    }
  }

  private check(message: SchedulerMessage, facts: readonly Fact[], snapshot: { context: SchedulerState; value: unknown }): void {
    const label = `after ${describeMessage(message)}`;
    this.ledger.read(message, facts as readonly LedgerFact[]);
    stepModel(this.model, message);
    const view = schedulerViewOf(snapshot.context);
    same(view, modelView(this.model), `machine view ${label}`);
    same(this.ledger.statuses(), modelStatuses(this.model), `input statuses from the facts ${label}`);
    const held = [...view.inbox, ...view.queue, ...view.pending, ...view.stack, ...(view.running ? [view.running] : [])];
    if (new Set(held).size !== held.length) throw new Error(`an input is in two places ${label}: ${JSON.stringify(view)}`);
    if (snapshot.value !== (view.running === null ? 'idle' : 'busy'))
      throw new Error(`machine state ${String(snapshot.value)} ${label} with ${view.running} running`);
    const chain = [...snapshot.context.stack, ...(snapshot.context.running ? [snapshot.context.running] : [])];
    if (snapshot.context.stack.length > 4 || chain.some((task, i) => i > 0 && task.level <= chain[i - 1]!.level)) {
      throw new Error(
        `the machine's chain (stack + running) must be at most 5 deep with rising levels ${label}: ${chain.map((t) => `${t.id}:L${t.level}`)}`,
      );
    }
    this.journal.push({ message, facts, view });
    this.context = snapshot.context;
    // Settled: whatever is due at this time has been decided, so a tick now would change
    // nothing. (The runtime only ticks at `nextWakeAt`, which never names a time already past.)
    if (CHECK_SETTLED) same(decisionsAt(this.model, this.model.now), [], `decisions still due ${label}`);
  }
}

const describeMessage = (m: SchedulerMessage): string => {
  switch (m.type) {
    case 'input.arrive': {
      const { id, kind, origin, level } = m.input;
      return `arrive(${id} ${kind}${level === undefined ? '' : ` L${level}`} ${origin})@${m.at}`;
    }
    case 'task.finish':
      return `finish(${m.taskId} ${m.outcome})@${m.at}`;
    default:
      return `${m.type}@${m.at}`;
  }
};

/**
 * Appends the journal in one batch (when `append`; else `store` holds it already), then
 * checks that the scheduler projection, applied message by message, gives the live view
 * after each, and that replaying the journal reproduces every fact byte for byte.
 */
const checkJournal = async (harness: Harness, store: EventStore, append: boolean, live: View): Promise<void> => {
  if (append && harness.journal.length > 0) {
    await store.append(
      SCHEDULER_STREAM,
      harness.journal.flatMap(({ message, facts }) => [
        { type: 'InputDelivered', data: { to: SCHEDULER_STREAM, message }, at: message.at },
        ...facts.map((fact) => ({ ...fact, at: message.at })),
      ]),
    );
  }
  const recorded = await store.readAll();
  expect(recorded.length, 'every message and fact is in the log').toBe(harness.journal.reduce((n, { facts }) => n + 1 + facts.length, 0));

  const db = openDatabase(':memory:');
  try {
    const runner = new ProjectionRunner(db, [schedulerProjection]);
    runner.prepare();
    const tx = new SqliteReadModelTx(db);
    let from = 0;
    for (const { message, facts, view } of harness.journal) {
      const to = from + 1 + facts.length;
      runner.apply(recorded.slice(from, to));
      from = to;
      same(readSchedulerView(tx), view, `projection view after ${describeMessage(message)} (seq ${to})`);
    }
  } finally {
    db.close();
  }

  const replayed = await replayJournal({ store, stream: SCHEDULER_STREAM, logic: schedulerMachine, input: MACHINE_INPUT });
  expect(replayed.divergence, 'replay reproduces every recorded fact').toBeNull();
  expect(replayed.messages.length).toBe(harness.journal.length);
  expect(schedulerViewOf(replayed.snapshot.context as SchedulerState), 'replayed view').toEqual(live);
};

// ---------------------------------------------------------------- commands, shared by both properties

type Step =
  | Readonly<{ t: 'arrive'; kind: 'queued' | 'interrupt'; level: number | undefined; origin: ModelOrigin }>
  /** Sends again an input the scheduler holds (or, with FC_REDELIVER_ENDED, one that ended), as a different kind/level. */
  | Readonly<{ t: 'redeliver'; pick: number; kind: 'queued' | 'interrupt'; level: number | undefined; origin: ModelOrigin }>
  | Readonly<{ t: 'finish' }>
  /** A completion for a task that is not running: suspended, waiting, ended or unknown. */
  | Readonly<{ t: 'stale'; pick: number }>
  | Readonly<{ t: 'stop' }>
  /** A stop for one input: the running one, a waiting one, or one that is neither. */
  | Readonly<{ t: 'cancel'; pick: number }>
  /** Interrupts of rising levels arriving at once: each preempts the last (the chain bound). */
  | Readonly<{ t: 'burst'; levels: readonly number[]; origin: ModelOrigin }>
  /** Moves virtual time forward; `tick` says whether the runtime ticks the scheduler then. */
  | Readonly<{ t: 'advance'; ms: number; tick: boolean }>
  /** A daemon starting with rules of this version (older or equal ones change nothing). */
  | Readonly<{ t: 'adopt'; version: number }>;

const arrival = (
  id: string,
  step: { kind: 'queued' | 'interrupt'; level: number | undefined; origin: ModelOrigin },
  at: number,
): SchedulerMessage => ({
  type: 'input.arrive',
  at,
  input: {
    id,
    source: `${step.origin}-source`,
    origin: step.origin,
    kind: step.kind,
    ...(step.level === undefined ? {} : { level: step.level }),
  },
});

/** The messages a step sends now (none when it has nothing to send in this state). */
const messagesFor = (step: Step, h: Harness): SchedulerMessage[] => {
  const model = h.model;
  switch (step.t) {
    case 'arrive':
      return [arrival(h.freshId(), step, h.clock)];
    case 'burst':
      return step.levels.map((level) => arrival(h.freshId(), { kind: 'interrupt', level, origin: step.origin }, h.clock));
    case 'redeliver': {
      const candidates = REDELIVER_ENDED ? [...liveIds(model), ...endedIds(model)] : liveIds(model);
      if (candidates.length === 0) return [];
      return [arrival(candidates[step.pick % candidates.length]!, step, h.clock)];
    }
    case 'finish':
      return model.running === null ? [] : [h.finish(model.running)];
    case 'stale': {
      const candidates = [...model.inputs.keys()].filter((id) => id !== model.running);
      return [h.finish(step.pick < candidates.length ? candidates[step.pick]! : `unknown-${step.pick}`)];
    }
    case 'stop':
      return [{ type: 'stop', at: h.clock }];
    case 'cancel': {
      const candidates = [...model.inputs.keys()];
      const inputId = step.pick < candidates.length ? candidates[step.pick]! : `unknown-${step.pick}`;
      return [{ type: 'cancel', at: h.clock, inputId }];
    }
    case 'advance':
      h.checkWake(h.clock + step.ms);
      h.clock += step.ms;
      return step.tick ? [{ type: 'tick', at: h.clock }] : [];
    case 'adopt':
      return [{ type: 'rules.adopt', at: h.clock, version: step.version }];
  }
};

const applies = (step: Step, model: Readonly<SchedulerModel>): boolean => step.t !== 'finish' || model.running !== null;

const describeStep = (step: Step): string => {
  switch (step.t) {
    case 'arrive':
    case 'redeliver':
      return `${step.t === 'arrive' ? 'Arrive(' : `Redeliver(#${step.pick}, `}${step.kind}${step.level === undefined ? '' : ` L${step.level}`} ${step.origin})`;
    case 'burst':
      return `Burst(${step.levels.map((l) => `L${l}`).join(' ')} ${step.origin})`;
    case 'finish':
      return 'FinishRunning';
    case 'stale':
      return `FinishStale(#${step.pick})`;
    case 'stop':
      return 'Stop';
    case 'cancel':
      return `Cancel(#${step.pick})`;
    case 'advance':
      return `Advance(${step.ms}${step.tick ? ', tick' : ''})`;
    case 'adopt':
      return `Adopt(rules ${step.version})`;
  }
};

type SyncReal = { deliver: (message: SchedulerMessage) => void };
type AsyncReal = { deliver: (message: SchedulerMessage) => Promise<unknown> };

class SyncStep implements fc.Command<Harness, SyncReal> {
  constructor(readonly step: Step) {}
  check = (h: Readonly<Harness>) => applies(this.step, h.model);
  run(h: Harness, real: SyncReal): void {
    for (const message of messagesFor(this.step, h)) real.deliver(message);
  }
  toString = () => describeStep(this.step);
}

class AsyncStep implements fc.AsyncCommand<Harness, AsyncReal> {
  constructor(readonly step: Step) {}
  check = () => true; // the state may change between check and run; `messagesFor` decides at run time
  async run(h: Harness, real: AsyncReal): Promise<void> {
    for (const message of messagesFor(this.step, h)) await real.deliver(message);
  }
  toString = () => describeStep(this.step);
}

const kindArb = fc.constantFrom<'queued' | 'interrupt'>('queued', 'interrupt', 'interrupt');
const originArb = fc.constantFrom<ModelOrigin>('user', 'plugin', 'kernel');
/** Mostly L1–L4 or none; now and then a level a source should not send (clamped by the rules). */
const levelArb = fc.option(
  fc.oneof({ weight: 12, arbitrary: fc.integer({ min: 1, max: 4 }) }, { weight: 1, arbitrary: fc.constantFrom(0, 5, 2.5, -1, 9) }),
  { nil: undefined, freq: 4 },
);
/**
 * Mostly whole half-seconds, so time often lands exactly on a cooldown's end (2 s) or the
 * backlog deadline (10 s) and the boundaries are tested; now and then any millisecond.
 */
const advanceArb = fc.oneof(
  { weight: 6, arbitrary: fc.integer({ min: 0, max: 6 }).map((n) => n * 500) },
  { weight: 2, arbitrary: fc.integer({ min: 0, max: 3_000 }) },
  { weight: 1, arbitrary: fc.integer({ min: 0, max: 4 }).map((n) => CONFIG.offloadAfterMs + n * 500) },
);

/** How many scheduled steps of work each started or resumed task takes, in turn. */
const durationsArb = fc.array(fc.integer({ min: 0, max: 6 }), { minLength: 1, maxLength: 8 });

const stepArbs: fc.Arbitrary<Step>[] = [
  fc.record({ t: fc.constant('arrive' as const), kind: kindArb, level: levelArb, origin: originArb }),
  fc.record({ t: fc.constant('arrive' as const), kind: kindArb, level: levelArb, origin: originArb }),
  fc.record({ t: fc.constant('arrive' as const), kind: kindArb, level: levelArb, origin: originArb }),
  fc.record({ t: fc.constant('redeliver' as const), pick: fc.nat(20), kind: kindArb, level: levelArb, origin: originArb }),
  fc.constant<Step>({ t: 'finish' }),
  fc.constant<Step>({ t: 'finish' }),
  fc.record({ t: fc.constant('stale' as const), pick: fc.nat(24) }),
  fc.record({
    t: fc.constant('burst' as const),
    levels: fc.subarray([1, 2, 3, 4], { minLength: 2 }),
    origin: fc.constantFrom<ModelOrigin>('kernel', 'user', 'plugin'),
  }),
  fc.constant<Step>({ t: 'stop' }),
  fc.record({ t: fc.constant('cancel' as const), pick: fc.nat(12) }),
  fc.record({ t: fc.constant('advance' as const), ms: advanceArb, tick: fc.boolean() }),
  fc.record({ t: fc.constant('advance' as const), ms: advanceArb, tick: fc.constant(true) }),
  fc.record({ t: fc.constant('adopt' as const), version: fc.integer({ min: 1, max: 3 }) }),
];

// ---------------------------------------------------------------- the properties

describe('scheduler model', () => {
  it(`plain actor: agrees with the model and the rules, and its journal folds and replays (${RUNS} runs)`, {
    timeout: Math.max(120_000, RUNS * 100),
  }, async () => {
    const commands = fc.commands(
      stepArbs.map((arb) => arb.map((step) => new SyncStep(step))),
      { maxCommands: 40, size: 'medium', ...replayPath },
    );
    await fc.assert(
      fc.asyncProperty(commands, async (cmds) => {
        const harness = new Harness();
        const actor = createActor(schedulerMachine, { input: MACHINE_INPUT });
        let emitted: Fact[] = [];
        actor.on('*', (fact: Fact) => emitted.push(fact));
        actor.start();
        const deliver = (message: SchedulerMessage) => {
          emitted = [];
          actor.send(message);
          harness.observe(message, emitted, actor.getSnapshot());
        };
        fc.modelRun(() => ({ model: harness, real: { deliver } }), cmds);

        // Then every task completes: nothing may be left behind.
        for (let guard = 0; harness.model.running !== null; guard++) {
          if (guard > 200) throw new Error('the scheduler never drained');
          deliver(harness.finish(harness.model.running));
        }
        harness.ledger.checkQuiescent();
        actor.stop();

        const store = new SqliteEventStore(openDatabase(':memory:'), {
          catalog: createDefaultCatalog(),
          clock: new VirtualClock(0),
          ids: new SequentialIds(),
        });
        try {
          await checkJournal(harness, store, true, schedulerViewOf(actor.getSnapshot().context));
        } finally {
          await store.close();
        }
      }),
      { numRuns: RUNS, ...replay },
    );
  });

  it(`journaled actor: completions race with arrivals, stops and time (${RUNS} runs)`, {
    timeout: Math.max(120_000, RUNS * 100),
  }, async () => {
    const commands = fc.commands(
      stepArbs.map((arb) => arb.map((step) => new AsyncStep(step))),
      { maxCommands: 30, size: 'medium', ...replayPath },
    );
    await fc.assert(
      fc.asyncProperty(fc.scheduler(), durationsArb, commands, async (s, durations, cmds) => {
        const harness = new Harness();
        const store = new InMemoryEventStore(createDefaultCatalog(), new VirtualClock(0), new SequentialIds());
        const failures: unknown[] = [];
        const inflight = new Set<Promise<unknown>>();
        let runs = 0;
        /** The effect of running a task: some scheduled steps of work, then its completion. */
        const work = async (taskId: string, steps: number) => {
          for (let i = 1; i <= steps; i++) await s.schedule(Promise.resolve(), `${taskId} works ${i}/${steps}`);
          await actor.deliver(harness.finish(taskId));
        };
        const actor: JournaledActor<typeof schedulerMachine> = new JournaledActor({
          store,
          stream: SCHEDULER_STREAM,
          logic: schedulerMachine,
          input: MACHINE_INPUT,
          onFacts: (facts, message) => {
            harness.observe(message as SchedulerMessage, facts, actor.snapshot);
            for (const fact of facts) {
              if (fact.type !== 'TaskStarted' && fact.type !== 'TaskResumed') continue;
              const done = work((fact.data as { taskId: string }).taskId, durations[runs++ % durations.length]!)
                .catch((error: unknown) => void failures.push(error))
                .finally(() => inflight.delete(done));
              inflight.add(done);
            }
          },
        });
        const deliver = (message: SchedulerMessage) => actor.deliver(message);
        try {
          await fc.scheduledModelRun(s, () => ({ model: harness, real: { deliver } }), cmds);
          // Let every task finish (and those they let start): release scheduled work, and let
          // the deliveries in flight reach the log, until nothing is left.
          for (let guard = 0; s.count() > 0 || inflight.size > 0; guard++) {
            if (guard > 20_000) throw new Error('the scheduler never drained');
            if (s.count() > 0) await s.waitOne();
            else await new Promise((resolve) => setImmediate(resolve));
          }
          if (failures.length > 0) throw failures[0];
          harness.ledger.checkQuiescent();
          await checkJournal(harness, store, false, schedulerViewOf(actor.snapshot.context));
        } finally {
          actor.stop();
          await store.close();
        }
      }),
      { numRuns: RUNS, ...replay },
    );
  });
});
