/**
 * One test per scheduling rule, given/when/then over the pure decider and fold.
 * Each was checked by breaking its rule once (see the commit that added them).
 */
import { describe, expect, it } from 'vitest';
import {
  decideScheduler,
  evolveScheduler,
  initialSchedulerState,
  nextWakeAt,
  schedulerViewOf,
  type InputDescriptor,
  type SchedulerFact,
  type SchedulerMessage,
  type SchedulerState,
} from '../../machines/scheduler/index.ts';

const config = { preemptCooldownMs: 2_000, offloadAfterMs: 60_000 };

/** Feeds messages in order; returns the final state and every fact, each as `Type:subject`. */
const given = (...messages: SchedulerMessage[]) => {
  let state: SchedulerState = initialSchedulerState(config);
  const facts: SchedulerFact[] = [];
  for (const message of messages) {
    const produced = decideScheduler(state, message);
    state = produced.reduce(evolveScheduler, { ...state, now: Math.max(state.now, message.at) });
    facts.push(...produced);
  }
  return { state, facts, view: schedulerViewOf(state) };
};

const describeFact = (f: SchedulerFact): string => {
  switch (f.type) {
    case 'InputQueued':
      return `Queued:${f.data.inputId}@L${f.data.level}`;
    case 'InboxPumped':
      return `Pumped:${f.data.inputIds.join(',')}`;
    case 'TaskStarted':
      return `Started:${f.data.taskId}`;
    case 'TaskPreempted':
      return `Preempted:${f.data.taskId}>${f.data.by}`;
    case 'TaskResumed':
      return `Resumed:${f.data.taskId}`;
    case 'TaskCompleted':
      return `Completed:${f.data.taskId}`;
    case 'StopRequested':
      return `Stop:[${f.data.cancelBudget.join(',')}]`;
    case 'InputShortCircuited':
      return `ShortCircuited:${f.data.inputId}`;
    case 'BacklogOffloaded':
      return `Offloaded:${f.data.inputIds.join(',')}`;
    case 'BacklogAcknowledged':
      return `ToldBusy:${f.data.inputIds.join(',')}`;
    case 'SchedulerRulesAdopted':
      return `Rules:${f.data.version}`;
  }
};
const trace = (facts: SchedulerFact[]) => facts.map(describeFact);

const arrive = (at: number, id: string, input: Partial<InputDescriptor> = {}): SchedulerMessage => ({
  type: 'input.arrive',
  at,
  input: { id, source: 'test', origin: 'user', kind: 'queued', ...input },
});
const interrupt = (at: number, id: string, level?: number, origin: InputDescriptor['origin'] = 'user') =>
  arrive(at, id, { kind: 'interrupt', origin, ...(level === undefined ? {} : { level }) });
const finish = (at: number, taskId: string): SchedulerMessage => ({ type: 'task.finish', at, taskId, outcome: 'done' });
const stop = (at: number): SchedulerMessage => ({ type: 'stop', at });
const tick = (at: number): SchedulerMessage => ({ type: 'tick', at });
const cancel = (at: number, inputId: string): SchedulerMessage => ({ type: 'cancel', at, inputId });

describe('cancelling one input', () => {
  it('stops the running task when it is that input, and leaves the waiting ones to run', () => {
    const { facts, view } = given(arrive(0, 'a'), arrive(1, 'b'), cancel(2, 'a'));
    const stop = facts.find((f) => f.type === 'StopRequested');
    expect(stop?.data).toEqual({ runningTaskId: 'a', cancelBudget: [], at: 2 });
    expect(view).toMatchObject({ running: 'a', queue: [], inbox: ['b'] });
  });

  it('short-circuits a waiting input at once, while another runs, and runs the others in turn', () => {
    const { facts, view } = given(arrive(0, 'a'), arrive(1, 'b'), arrive(2, 'c'), cancel(3, 'b'), finish(4, 'a'));
    expect(trace(facts).slice(-5)).toEqual(['Stop:[b]', 'ShortCircuited:b', 'Completed:a', 'Pumped:c', 'Started:c']);
    expect(facts.find((f) => f.type === 'StopRequested')?.data).toMatchObject({ runningTaskId: null, cancelBudget: ['b'] });
    expect(view).toMatchObject({ running: 'c' });
  });

  it('records nothing for an input that ended, is suspended or was never seen', () => {
    const ended = given(arrive(0, 'a'), finish(1, 'a'));
    expect(decideScheduler(ended.state, cancel(2, 'a'))).toEqual([]);
    const suspended = given(arrive(0, 'a'), interrupt(1, 'i'));
    expect(decideScheduler(suspended.state, cancel(2, 'a'))).toEqual([]);
    expect(decideScheduler(suspended.state, cancel(2, 'nobody'))).toEqual([]);
  });
});

describe('scheduler rules', () => {
  it('queued inputs wait for the running task, then run in arrival order', () => {
    const { facts, view } = given(arrive(0, 'a'), arrive(1, 'b'), arrive(2, 'c'), finish(3, 'a'));
    expect(trace(facts)).toEqual([
      'Queued:a@L0',
      'Pumped:a',
      'Started:a',
      'Queued:b@L0',
      'Queued:c@L0',
      'Completed:a',
      'Pumped:b,c',
      'Started:b',
    ]);
    expect(view).toMatchObject({ running: 'b', queue: ['c'], inbox: [] });
  });

  it('an interrupt without a declared level is L1, and any interrupt preempts a queued task', () => {
    const { facts, view } = given(arrive(0, 'a'), interrupt(1, 'i'));
    expect(trace(facts).slice(3)).toEqual(['Queued:i@L1', 'Preempted:a>i', 'Started:i']);
    expect(view).toMatchObject({ running: 'i', stack: ['a'] });
  });

  it('a plugin declaring L4 is clamped to L3; the kernel may use L4', () => {
    expect(trace(given(interrupt(0, 'p', 4, 'plugin')).facts)[0]).toBe('Queued:p@L3');
    expect(trace(given(interrupt(0, 'k', 4, 'kernel')).facts)[0]).toBe('Queued:k@L4');
  });

  it('the same level never preempts the same level', () => {
    const { facts, view } = given(interrupt(0, 'x', 2), interrupt(1, 'y', 2));
    expect(trace(facts)).not.toContain('Preempted:x>y');
    expect(view).toMatchObject({ running: 'x', pending: ['y'] });
  });

  it('a preempted task resumes from the stack when the preempting work ends (LIFO)', () => {
    const { facts, view } = given(arrive(0, 'a'), interrupt(1, 'b', 1), interrupt(2, 'c', 2), finish(3, 'c'), finish(4, 'b'));
    expect(trace(facts).filter((f) => /Preempted|Resumed/.test(f))).toEqual(['Preempted:a>b', 'Preempted:b>c', 'Resumed:b', 'Resumed:a']);
    expect(view).toMatchObject({ running: 'a', stack: [] });
  });

  it('waiting interrupts run higher level first, then in arrival order', () => {
    const { view } = given(interrupt(0, 'run', 3), interrupt(1, 'l1', 1), interrupt(2, 'l2a', 2), interrupt(3, 'l2b', 2));
    expect(view.pending).toEqual(['l2a', 'l2b', 'l1']);
  });

  it('starvation guard: each preemption raises the effective level by one, at most two', () => {
    // a (queued) is preempted by L1 at t=1, resumes, and at t=4000 (cooldown over) an L1 cannot preempt it (effective 1)...
    const once = given(arrive(0, 'a'), interrupt(1, 'x', 1), finish(2, 'x'), interrupt(4_000, 'y', 1));
    expect(once.view).toMatchObject({ running: 'a', pending: ['y'] });
    // ...but an L2 can; after two preemptions nothing below L3 preempts it (0 + min(2, 2) = 2).
    const twice = given(
      arrive(0, 'a'),
      interrupt(1, 'x', 1),
      finish(2, 'x'),
      interrupt(4_000, 'y', 2),
      finish(4_001, 'y'),
      interrupt(8_000, 'z', 2),
    );
    expect(trace(twice.facts)).toContain('Preempted:a>y');
    expect(twice.view).toMatchObject({ running: 'a', pending: ['z'] });
    // Three preemptions still count as two: an L3 preempts it (0 + 2 < 3), where an uncapped count would block it.
    const thrice = given(
      arrive(0, 'a'),
      interrupt(1, 'x', 1),
      finish(2, 'x'),
      interrupt(4_000, 'y', 2),
      finish(4_001, 'y'),
      interrupt(8_000, 'z', 3),
      finish(8_001, 'z'),
      interrupt(12_000, 'w', 3),
    );
    expect(trace(thrice.facts)).toContain('Preempted:a>w');
  });

  it('cooldown: a task preempted less than 2 s ago cannot be preempted again; a tick after it can', () => {
    const early = given(arrive(0, 'a'), interrupt(1_000, 'x', 1), finish(1_500, 'x'), interrupt(2_999, 'y', 3));
    expect(early.view).toMatchObject({ running: 'a', pending: ['y'] });
    expect(nextWakeAt(early.state)).toBe(3_000);
    const later = given(arrive(0, 'a'), interrupt(1_000, 'x', 1), finish(1_500, 'x'), interrupt(2_999, 'y', 3), tick(3_000));
    expect(trace(later.facts).at(-2)).toBe('Preempted:a>y');
  });

  it('stop cancels the running inference and short-circuits exactly the inputs waiting at that moment, inbox included', () => {
    const { facts, view } = given(
      arrive(0, 'run'),
      arrive(1, 'q1'),
      arrive(2, 'q2'),
      finish(3, 'run'), // q2 now queued, q1 running
      arrive(4, 'inbox1'),
      interrupt(5, 'low', 1, 'plugin'), // preempts q1? yes: L1 > 0
      stop(6),
      arrive(7, 'after'),
      finish(8, 'low'),
      finish(9, 'q1'),
    );
    expect(trace(facts)).toContain('Stop:[q2,inbox1]');
    expect(facts.find((f) => f.type === 'StopRequested')!.data).toMatchObject({ runningTaskId: 'low' });
    expect(trace(facts).filter((f) => f.startsWith('ShortCircuited'))).toEqual(['ShortCircuited:q2', 'ShortCircuited:inbox1']);
    expect(view.running).toBe('after');
  });

  it('tells queued inputs once that the agent is busy past the offload time, and keeps them queued in order', () => {
    const { facts, view, state } = given(
      arrive(0, 'long'),
      arrive(10, 'w1'),
      arrive(20, 'w2'),
      tick(59_999),
      tick(60_000),
      arrive(61_000, 'w3'),
      tick(70_000),
    );
    expect(trace(facts).filter((f) => f.startsWith('ToldBusy'))).toEqual(['ToldBusy:w1,w2', 'ToldBusy:w3']);
    expect(facts.find((f) => f.type === 'BacklogAcknowledged')!.data).toMatchObject({ runningTaskId: 'long', busyForMs: 60_000 });
    expect([...view.queue, ...view.inbox].sort()).toEqual(['w1', 'w2', 'w3']);
    expect(nextWakeAt(state)).toBeNull(); // everyone was told: no tick is needed for them
    const after = given(arrive(0, 'long'), arrive(10, 'w1'), tick(60_000), finish(61_000, 'long'), finish(62_000, 'w1'));
    expect(trace(after.facts).filter((f) => f.startsWith('Started'))).toEqual(['Started:long', 'Started:w1']);
  });

  it('tells waiting interrupts busy too once rules 2 are adopted, and only from then on', () => {
    const adopt = (at: number, version: number): SchedulerMessage => ({ type: 'rules.adopt', at, version });
    const waitingBehindLong = [interrupt(0, 'long', 3), interrupt(10, 'person', 3), arrive(20, 'q')] as const;
    const before = given(...waitingBehindLong, tick(60_000));
    expect(trace(before.facts).filter((f) => f.startsWith('ToldBusy'))).toEqual(['ToldBusy:q']);
    const adopted = given(adopt(0, 2), ...waitingBehindLong, tick(60_000));
    expect(trace(adopted.facts).filter((f) => /^(ToldBusy|Rules)/.test(f))).toEqual(['Rules:2', 'ToldBusy:q,person']);
    // Adopted midway: what was decided before stands, what is decided after follows the new rules.
    const midway = given(...waitingBehindLong, tick(60_000), adopt(61_000, 2), interrupt(62_000, 'late', 2), tick(62_001));
    expect(trace(midway.facts).filter((f) => /^(ToldBusy|Rules)/.test(f))).toEqual([
      'ToldBusy:q',
      'Rules:2',
      'ToldBusy:person',
      'ToldBusy:late',
    ]);
    // An older or equal version changes nothing.
    expect(given(adopt(0, 2), adopt(1, 2), adopt(2, 1)).facts.map((f) => f.type)).toEqual(['SchedulerRulesAdopted']);
  });

  it("lets a person's input preempt a plugin's task the starvation guard lifted, from rules 3 on", () => {
    const adopt = (at: number, version: number): SchedulerMessage => ({ type: 'rules.adopt', at, version });
    // A plugin's L2 preempted once by its own L3 counts as L3 by the guard; the person's L3 comes after it resumed.
    const lifted = [
      interrupt(0, 'work', 2, 'plugin'),
      interrupt(100, 'own', 3, 'plugin'),
      finish(200, 'own'),
      interrupt(5_000, 'person', 3, 'user'),
      tick(60_000),
    ] as const;
    const before = given(adopt(0, 2), ...lifted);
    expect(before.view.running).toBe('work');
    expect(before.view.pending).toEqual(['person']);
    const now = given(adopt(0, 3), ...lifted);
    expect(trace(now.facts).filter((f) => f.startsWith('Preempted'))).toEqual(['Preempted:work>own', 'Preempted:work>person']);
    expect(now.view.running).toBe('person');
    // Another plugin's L3 still may not: the guard holds for everyone but the person.
    const peer = given(adopt(0, 3), ...lifted.slice(0, 3), interrupt(5_000, 'other', 3, 'plugin'), tick(60_000));
    expect(peer.view.running).toBe('work');
  });

  it('ignores a completion for a task that is not running, and a re-delivered input', () => {
    const { facts } = given(arrive(0, 'a'), finish(1, 'zzz'), arrive(2, 'a'), finish(3, 'a'), finish(4, 'a'));
    expect(trace(facts)).toEqual(['Queued:a@L0', 'Pumped:a', 'Started:a', 'Completed:a']);
  });

  it('time never goes back: a late message is decided at the latest time seen', () => {
    const { facts } = given(arrive(5_000, 'a'), interrupt(1_000, 'b', 1));
    expect(facts.find((f) => f.type === 'TaskPreempted')!.data.at).toBe(5_000);
  });
});
