import { describe, expect, it } from 'vitest';
import { createActor, SimulatedClock } from 'xstate';
import {
  pluginSupervisorMachine,
  type PluginSupervisorFact,
  type PluginSupervisorInput,
  type PluginSupervisorMessage,
} from '../../machines/pluginSupervisor/index.ts';

type Untimed<E> = E extends unknown ? Omit<E, 'at'> : never;

/** A supervisor actor on a SimulatedClock, with counted spawn/kill effects and the facts it emitted. */
const supervise = (input: Partial<PluginSupervisorInput> = {}) => {
  const clock = new SimulatedClock();
  const effects = { spawned: 0, killed: 0 };
  const machine = pluginSupervisorMachine.provide({
    actions: {
      spawnProcess: () => void effects.spawned++,
      killProcess: () => void effects.killed++,
    },
  });
  const actor = createActor(machine, { input: { plugin: 'timer', ...input }, clock });
  const facts: PluginSupervisorFact[] = [];
  actor.on('*', (fact) => void facts.push(fact));
  actor.start();
  /** Sends a message stamped with the clock's time. */
  const send = (message: Untimed<PluginSupervisorMessage>) => actor.send({ ...message, at: clock.now() } as PluginSupervisorMessage);
  return {
    clock,
    actor,
    facts,
    effects,
    send,
    state: () => actor.getSnapshot().value,
    context: () => actor.getSnapshot().context,
    advance: (ms: number) => clock.increment(ms),
    /** Advances the clock to an absolute time. */
    advanceTo: (ms: number) => clock.set(ms),
    crash: () => send({ type: 'PROCESS_EXITED', exitCode: 1, signal: null }),
    ready: () => send({ type: 'PROCESS_READY' }),
    factsOf: <T extends PluginSupervisorFact['type']>(type: T) =>
      facts.filter((f) => f.type === type).map((f) => f.data) as Extract<PluginSupervisorFact, { type: T }>['data'][],
  };
};

/** Crash, then check the restart comes exactly `delayMs` later and not a millisecond earlier. */
const expectRestartAfter = (s: ReturnType<typeof supervise>, delayMs: number) => {
  const spawned = s.effects.spawned;
  expect(s.state()).toBe('backoff');
  s.advance(delayMs - 1);
  expect(s.state()).toBe('backoff');
  expect(s.effects.spawned).toBe(spawned);
  s.advance(1);
  expect(s.state()).toBe('starting');
  expect(s.effects.spawned).toBe(spawned + 1);
};

/** Start the plugin and crash it three times (at 0 s, 1 s, 3 s), ending in `starting` at 6 s. */
const threeCrashes = (s: ReturnType<typeof supervise>) => {
  s.send({ type: 'START' });
  for (const delay of [1_000, 2_000, 3_000]) {
    s.crash();
    s.advance(delay);
  }
  expect(s.state()).toBe('starting');
  expect(s.clock.now()).toBe(6_000);
};

describe('pluginSupervisorMachine', () => {
  it('starts the process on START and reports it started when it is ready', () => {
    const s = supervise();
    s.send({ type: 'START' });
    expect(s.state()).toBe('starting');
    expect(s.effects.spawned).toBe(1);
    s.advance(250);
    s.ready();
    expect(s.state()).toBe('running');
    expect(s.facts.map((f) => f.type)).toEqual(['PluginStarting', 'PluginStarted']);
    expect(s.factsOf('PluginStarted')).toEqual([{ plugin: 'timer', at: 250 }]);
  });

  it('backs off exactly 1 s, 2 s, 3 s after the 1st, 2nd and 3rd crash, not a millisecond earlier', () => {
    const s = supervise();
    s.send({ type: 'START' });
    s.ready();
    s.crash();
    expectRestartAfter(s, 1_000);
    s.ready();
    s.crash();
    expectRestartAfter(s, 2_000);
    s.send({ type: 'PROCESS_CRASHED', error: 'handshake failed' });
    expectRestartAfter(s, 3_000);
    expect(s.factsOf('PluginRestarting').map(({ attempt, delayMs }) => [attempt, delayMs])).toEqual([
      [1, 1_000],
      [2, 2_000],
      [3, 3_000],
    ]);
    expect(s.factsOf('PluginStarting').map((f) => [f.attempt, f.at])).toEqual([
      [0, 0],
      [1, 1_000],
      [2, 3_000],
      [3, 6_000],
    ]);
  });

  it('counts a crash during starting (spawn or handshake failed) like any crash', () => {
    const s = supervise();
    s.send({ type: 'START' });
    s.send({ type: 'PROCESS_CRASHED', error: 'spawn ENOENT' });
    expect(s.state()).toBe('backoff');
    expect(s.factsOf('PluginCrashed')).toEqual([
      { plugin: 'timer', exitCode: null, signal: null, error: 'spawn ENOENT', crashCount: 1, at: 0 },
    ]);
  });

  it('stops at once on a start refused for good, saying what to fix, and never restarts on its own; a person may start it again', () => {
    const s = supervise();
    threeCrashes(s);
    s.send({ type: 'START_REFUSED', error: 'speaks plugin protocol 2; rebuild it' });
    expect(s.state()).toBe('stopped');
    expect(s.factsOf('PluginStopped')).toEqual([
      { plugin: 'timer', reason: 'refused', error: 'speaks plugin protocol 2; rebuild it', at: 6_000 },
    ]);
    expect(s.factsOf('PluginCrashed')).toHaveLength(3);
    const spawned = s.effects.spawned;
    s.advance(600_000);
    expect(s.effects.spawned).toBe(spawned);
    s.send({ type: 'START' });
    expect(s.state()).toBe('starting');
    expect(s.context().crashTimes).toEqual([]);
  });

  it('gives up on the 4th crash within 5 minutes and never restarts on its own', () => {
    const s = supervise();
    threeCrashes(s);
    s.crash();
    expect(s.state()).toBe('gaveUp');
    expect(s.factsOf('PluginGaveUp')).toEqual([{ plugin: 'timer', crashes: 4, firstCrashAt: 0, at: 6_000 }]);
    expect(s.factsOf('PluginRestarting')).toHaveLength(3);
    s.advance(10 * 60_000);
    s.send({ type: 'STOP' });
    expect(s.state()).toBe('gaveUp');
    expect(s.effects.spawned).toBe(4);
  });

  it('gives up when the 4th crash comes exactly 5 minutes after the first of the last four', () => {
    const s = supervise({ config: { stableUptimeMs: 3_600_000 } });
    threeCrashes(s);
    s.ready();
    s.advanceTo(300_000);
    s.crash();
    expect(s.state()).toBe('gaveUp');
  });

  it('does not give up when the 4th crash comes 5 minutes + 1 ms after the first of the last four', () => {
    const s = supervise({ config: { stableUptimeMs: 3_600_000 } });
    threeCrashes(s);
    s.ready();
    s.advanceTo(300_001);
    s.crash();
    expect(s.factsOf('PluginCrashed').at(-1)?.crashCount).toBe(3);
    expect(s.factsOf('PluginRestarting').at(-1)).toMatchObject({ attempt: 3, delayMs: 3_000 });
    expectRestartAfter(s, 3_000);
  });

  it('forgets the crash history after 60 s of stable uptime, and not a millisecond before', () => {
    const stable = supervise();
    threeCrashes(stable);
    stable.ready();
    stable.advance(60_000);
    stable.crash();
    expect(stable.factsOf('PluginRestarting').at(-1)).toMatchObject({ attempt: 1, delayMs: 1_000 });
    expectRestartAfter(stable, 1_000);

    const unstable = supervise();
    threeCrashes(unstable);
    unstable.ready();
    unstable.advance(59_999);
    unstable.crash();
    expect(unstable.state()).toBe('gaveUp');
  });

  it('takes the stable uptime from the configuration', () => {
    const s = supervise({ config: { stableUptimeMs: 5_000 } });
    threeCrashes(s);
    s.ready();
    s.advance(5_000);
    s.crash();
    expect(s.state()).toBe('backoff');
    expect(s.context().crashTimes).toEqual([11_000]);
  });

  it('with auto-restart off, a crash ends in stopped with PluginCrashed and PluginStopped only', () => {
    const s = supervise({ config: { autoRestart: false } });
    s.send({ type: 'START' });
    s.ready();
    s.facts.length = 0;
    s.crash();
    expect(s.state()).toBe('stopped');
    expect(s.facts.map((f) => f.type)).toEqual(['PluginCrashed', 'PluginStopped']);
    expect(s.factsOf('PluginStopped')).toEqual([{ plugin: 'timer', reason: 'crashed', at: 0 }]);
    s.advance(10 * 60_000);
    expect(s.effects.spawned).toBe(1);
    expect(s.state()).toBe('stopped');
  });

  it('STOP during backoff cancels the pending restart', () => {
    const s = supervise();
    s.send({ type: 'START' });
    s.crash();
    s.advance(500);
    s.send({ type: 'STOP' });
    expect(s.state()).toBe('stopped');
    expect(s.factsOf('PluginStopped')).toEqual([{ plugin: 'timer', reason: 'requested', at: 500 }]);
    s.advance(10 * 60_000);
    expect(s.state()).toBe('stopped');
    expect(s.effects.spawned).toBe(1);
  });

  it('STOP while running kills the process and does not restart it when it exits', () => {
    const s = supervise();
    s.send({ type: 'START' });
    s.ready();
    s.send({ type: 'STOP' });
    expect(s.state()).toBe('stopping');
    expect(s.effects.killed).toBe(1);
    s.advance(100);
    s.send({ type: 'PROCESS_EXITED', exitCode: 0, signal: 'SIGTERM' });
    expect(s.state()).toBe('stopped');
    expect(s.factsOf('PluginCrashed')).toEqual([]);
    s.advance(10 * 60_000);
    expect(s.effects.spawned).toBe(1);
  });

  it('DISABLE stops the plugin and START is refused until ENABLE', () => {
    const s = supervise();
    s.send({ type: 'START' });
    s.ready();
    s.send({ type: 'DISABLE' });
    s.send({ type: 'PROCESS_EXITED', exitCode: 0, signal: null });
    expect(s.state()).toBe('stopped');
    expect(s.factsOf('PluginStopped')).toMatchObject([{ reason: 'disabled' }]);
    s.send({ type: 'START' });
    expect(s.state()).toBe('stopped');
    s.send({ type: 'ENABLE' });
    expect(s.state()).toBe('starting');
    expect(s.facts.map((f) => f.type)).toContain('PluginEnabled');
    expect(s.facts.map((f) => f.type)).toContain('PluginDisabled');
  });

  it('ENABLE after giving up restarts the plugin with a fresh crash history', () => {
    const s = supervise();
    threeCrashes(s);
    s.crash();
    expect(s.state()).toBe('gaveUp');
    s.advance(1_000);
    s.send({ type: 'ENABLE' });
    expect(s.state()).toBe('starting');
    expect(s.effects.spawned).toBe(5);
    expect(s.factsOf('PluginStarting').at(-1)).toEqual({ plugin: 'timer', attempt: 0, at: 7_000 });
    s.crash();
    expect(s.factsOf('PluginCrashed').at(-1)?.crashCount).toBe(1);
    expectRestartAfter(s, 1_000);
  });

  it("a person's START also leaves gaveUp with a fresh history", () => {
    const s = supervise();
    threeCrashes(s);
    s.crash();
    s.send({ type: 'START' });
    expect(s.state()).toBe('starting');
    expect(s.context().crashTimes).toEqual([]);
  });
});
