/**
 * Model-based test: xstate/graph walks the supervisor's own machine (events stamped with
 * plausible `at` values, the timers as their `xstate.after` events) and replays each shortest
 * path against a live actor on a SimulatedClock, checking the invariants of every state on
 * the way and, at the end, what the state promises over time.
 */
import { describe, expect, it } from 'vitest';
import { createActor, SimulatedClock, type SnapshotFrom } from 'xstate';
import { TestModel } from 'xstate/graph';
import {
  DEFAULT_PLUGIN_SUPERVISOR_CONFIG,
  pluginSupervisorMachine,
  RESTART_DUE_EVENT,
  STABLE_UPTIME_EVENT,
  type PluginSupervisorFact,
  type PluginSupervisorInput,
  type PluginSupervisorMessage,
} from '../../machines/pluginSupervisor/index.ts';

type Snapshot = SnapshotFrom<typeof pluginSupervisorMachine>;
/** Messages the model sends; the two timer events are added to them as `xstate.after` events. */
type ModelEvent = PluginSupervisorMessage;

const STEP_MS = 100; // shorter than any backoff, so no timer fires between modelled events
const TEN_MINUTES = 600_000;
const { backoffMs } = DEFAULT_PLUGIN_SUPERVISOR_CONFIG;

const nextEvents = (snapshot: Snapshot): ModelEvent[] => {
  const at = snapshot.context.now + STEP_MS;
  const events: ModelEvent[] = [
    { type: 'START', at },
    { type: 'STOP', at },
    { type: 'ENABLE', at },
    { type: 'DISABLE', at },
    { type: 'PROCESS_READY', at },
    { type: 'PROCESS_EXITED', at, exitCode: 1, signal: null },
    { type: 'PROCESS_CRASHED', at, error: 'handshake failed' },
    { type: 'START_REFUSED', at, error: 'speaks plugin protocol 2' },
  ];
  const timers = snapshot.matches('backoff') ? [RESTART_DUE_EVENT] : snapshot.matches('running') ? [STABLE_UPTIME_EVENT] : [];
  return [...events, ...timers.map((type) => ({ type }) as unknown as ModelEvent)];
};

/**
 * States are told apart by their value and what the decisions depend on, never by the clock;
 * the crash count is capped so that a broken machine fails an assertion instead of the traversal running away.
 */
const serializeState = (s: Snapshot) =>
  JSON.stringify([s.value, s.context.enabled, Math.min(s.context.crashTimes.length, 5), s.context.runningSince !== null]);

const liveSupervisor = (input: PluginSupervisorInput) => {
  const clock = new SimulatedClock();
  const effects = { spawned: 0, killed: 0 };
  const actor = createActor(
    pluginSupervisorMachine.provide({
      actions: { spawnProcess: () => void effects.spawned++, killProcess: () => void effects.killed++ },
    }),
    { input, clock },
  );
  const facts: PluginSupervisorFact[] = [];
  actor.on('*', (fact) => void facts.push(fact));
  actor.start();
  return { clock, actor, effects, facts, value: () => actor.getSnapshot().value };
};
type Live = ReturnType<typeof liveSupervisor>;

/** What must hold whenever the live actor rests in the same state as the model. */
const checkAgainstModel = (live: Live, model: Snapshot) => {
  const sut = live.actor.getSnapshot();
  expect(sut.value).toBe(model.value);
  expect(sut.context.crashTimes).toEqual(model.context.crashTimes);
  expect(sut.context.enabled).toBe(model.context.enabled);
  expect(sut.value).not.toBe('crashed'); // transient: decided in the same macrostep
  const starts = live.facts.filter((f) => f.type === 'PluginStarting').length;
  expect(live.effects.spawned).toBe(starts);
  const last = live.facts.at(-1);
  switch (sut.value) {
    case 'starting':
      expect(last?.type).toBe('PluginStarting');
      break;
    case 'running':
      expect(sut.context.runningSince).not.toBeNull();
      break;
    case 'backoff': {
      // a restart is scheduled: announced, with the delay of this crash's place in the window
      expect(last?.type).toBe('PluginRestarting');
      const attempt = sut.context.crashTimes.length;
      expect(last?.data).toMatchObject({ attempt, delayMs: backoffMs[attempt - 1] });
      expect(sut.context.restartAt).toBe(sut.context.now + sut.context.restartDelayMs);
      break;
    }
    case 'gaveUp':
      expect(sut.context.crashTimes.length).toBeGreaterThanOrEqual(4);
      expect(live.facts.some((f) => f.type === 'PluginGaveUp')).toBe(true);
      break;
    case 'stopping':
      expect(live.effects.killed).toBeGreaterThan(0);
      break;
  }
};

/** What the final state promises over time. */
const checkFinal = (live: Live, model: Snapshot) => {
  const spawned = live.effects.spawned;
  switch (model.value) {
    case 'backoff': {
      const { restartDelayMs } = live.actor.getSnapshot().context;
      live.clock.increment(restartDelayMs - 1);
      expect(live.value()).toBe('backoff');
      live.clock.increment(1);
      expect(live.value()).toBe('starting');
      expect(live.effects.spawned).toBe(spawned + 1);
      break;
    }
    case 'gaveUp':
    case 'stopped':
    case 'stopping':
      live.clock.increment(TEN_MINUTES);
      expect(live.value()).toBe(model.value);
      expect(live.effects.spawned).toBe(spawned);
      break;
    case 'running':
      live.clock.increment(TEN_MINUTES);
      expect(live.value()).toBe('running');
      expect(live.actor.getSnapshot().context.crashTimes).toEqual([]);
      break;
    case 'starting':
      live.clock.increment(TEN_MINUTES);
      expect(live.value()).toBe('starting'); // waits for the process to report
      break;
    default:
      throw new Error(`unexpected final state ${JSON.stringify(model.value)}`);
  }
};

const inputs: PluginSupervisorInput[] = [
  { plugin: 'timer' },
  { plugin: 'timer', config: { autoRestart: false } },
  { plugin: 'timer', enabled: false },
];

describe('pluginSupervisorMachine (model-based, xstate/graph)', () => {
  for (const input of inputs) {
    describe(`with input ${JSON.stringify(input)}`, () => {
      // `createTestModel` refuses machines with `after`; the model drives the timers itself as
      // their `xstate.after` events (and the live actor by its SimulatedClock), so build it directly.
      const model = new TestModel<Snapshot, ModelEvent, PluginSupervisorInput>(pluginSupervisorMachine as never, {
        input,
        events: nextEvents,
        serializeState,
        limit: 10_000,
      });
      const paths = model.getShortestPaths({ allowDuplicatePaths: true });

      it('reaches every resting state it should', () => {
        const reached = new Set(paths.map((p) => String(p.state.value)));
        const expected = [
          'stopped',
          'starting',
          'running',
          'stopping',
          ...(input.config?.autoRestart === false ? [] : ['backoff', 'gaveUp']),
        ];
        expect([...reached].sort()).toEqual(expected.sort());
      });

      for (const path of paths) {
        it(`${path.description}`, async () => {
          const live = liveSupervisor(input);
          const timerDue = (step: { state: Snapshot }) => live.clock.set(step.state.context.now);
          const message = (step: { event: unknown }) => {
            const event = step.event as PluginSupervisorMessage;
            live.clock.set(event.at);
            live.actor.send(event);
          };
          const events = Object.fromEntries(
            [...nextEvents(path.steps[0]!.state).map((e) => e.type), RESTART_DUE_EVENT, STABLE_UPTIME_EVENT].map((type) => [
              type,
              type.startsWith('xstate.after.') ? timerDue : message,
            ]),
          );
          const states = Object.fromEntries(
            ['stopped', 'starting', 'running', 'backoff', 'gaveUp', 'stopping'].map((key) => [
              key,
              (snapshot: Snapshot) => checkAgainstModel(live, snapshot),
            ]),
          );
          await path.test({ events: events as never, states });
          // `path.state` may be another snapshot with the same serialization; the last step's is the one reached
          const reached = path.steps.at(-1)?.state ?? path.state;
          checkAgainstModel(live, reached);
          checkFinal(live, reached);
        });
      }
    });
  }
});
