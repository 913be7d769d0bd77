import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { VirtualClock } from '../../events/index.ts';
import type { RunningPlugin } from '../../plugins/sdk/builtinPlugin.ts';
import { TimerStoreCorrupt, timerPlugin } from '../../plugins/builtin/timer/index.ts';
import { GUEST_TIMER_LEVEL, GUEST_TIMERS, TIMER_INTERRUPT_LEVEL } from '../../plugins/builtin/timer/timerPlugin.ts';
import { createFakePluginApi, replyOf } from '../support/fakePluginApi.ts';
import { useTempDir } from '../support/tempDir.ts';
import { createManualTimers } from '../support/manualTimers.ts';

const tempDir = useTempDir();
const T0 = Date.parse('2030-01-01T00:00:00Z');
/** Every plugin a test started, stopped after it (its last save finished) before its data dir is removed. */
const started: RunningPlugin[] = [];
afterEach(async () => {
  for (const running of started.splice(0)) await running.stop();
});

/** A timer plugin started on `dataDir` at `now`, with a clock and timers that move together. */
const startTimer = async (dataDir: string, now = T0) => {
  const clock = new VirtualClock(now);
  const timers = createManualTimers();
  const api = createFakePluginApi('timer');
  const running: RunningPlugin = await timerPlugin.start(api, { dataDir, clock, timers });
  started.push(running);
  const tick = (ms: number) => {
    clock.advance(ms);
    timers.advance(ms);
  };
  const call = async (tool: string, args: Record<string, unknown> = {}, principal?: string) =>
    replyOf(await api.call(tool, args, principal === undefined ? {} : { principal }));
  const fired = () => api.interrupts.map((i) => [i.input.text, i.level] as const);
  return { clock, timers, api, running, tick, call, fired };
};

describe("timer plugin: anyone else's timers", () => {
  // A red-team run: a plugin's guest listed the owner's timer (its note private) and cancelled it.
  it('are neither listed to a guest nor cancelled by one; a guest sees and cancels those it set in its conversation', async () => {
    const { api, call } = await startTimer(tempDir());
    const as =
      (principal: string, conversation: string) =>
      async (tool: string, args: Record<string, unknown> = {}) =>
        replyOf(await api.call(tool, args, { principal, conversation }));
    const owner = as('owner', 'cli:ada');
    const guest = as('qq.guest', 'qq:bob');
    const otherGuest = as('qq.guest', 'qq:eve');
    await owner('timer_set', { seconds: 60, note: 'PRIVATE: call the clinic' });
    await guest('timer_set', { seconds: 120, note: 'bob: water the plants' });
    expect((await guest('timer_list')).content).toMatch(/^t2 .* bob: water the plants$/);
    expect((await otherGuest('timer_list')).content).toBe('No timers are set.');
    for (const id of ['t1', 't2']) {
      expect(await otherGuest('timer_cancel', { id })).toMatchObject({
        isError: true,
        content: expect.stringContaining(`no timer '${id}'`),
      });
    }
    expect(await guest('timer_cancel', { id: 't1' })).toMatchObject({ isError: true });
    expect((await call('timer_list', {}, 'owner')).content.split('\n')).toHaveLength(2);
    expect((await guest('timer_cancel', { id: 't2' })).isError).toBe(false);
    expect((await owner('timer_cancel', { id: 't1' })).isError).toBe(false);
  });

  it("fire below the person's messages, and each guest holds at most GUEST_TIMERS of them", async () => {
    const { call, tick, fired } = await startTimer(tempDir());
    await call('timer_set', { seconds: 10, note: 'mine' }, 'owner');
    await call('timer_set', { seconds: 10, note: 'from a plugin turn' }, 'spammer');
    await call('timer_set', { seconds: 10, note: 'from before principals' });
    tick(10_000);
    expect(fired()).toEqual([
      ['Timer t1 fired: mine', TIMER_INTERRUPT_LEVEL],
      ['Timer t2 fired: from a plugin turn', GUEST_TIMER_LEVEL],
      ['Timer t3 fired: from before principals', TIMER_INTERRUPT_LEVEL],
    ]);
    for (let i = 0; i < GUEST_TIMERS; i++) expect((await call('timer_set', { seconds: 60, note: `n${i}` }, 'spammer')).isError).toBe(false);
    const refused = await call('timer_set', { seconds: 60, note: 'one more' }, 'spammer');
    expect(refused).toMatchObject({
      isError: true,
      content: expect.stringContaining(`${GUEST_TIMERS} timers are already set for spammer`),
    });
    // Another guest, and the person, still may.
    expect((await call('timer_set', { seconds: 60, note: 'other' }, 'qq.guest')).isError).toBe(false);
    expect((await call('timer_set', { seconds: 60, note: 'mine again' }, 'owner')).isError).toBe(false);
  });
});

describe('timer plugin: firing', () => {
  it('raises an L3 interrupt at the due time and not before', async () => {
    const { call, tick, fired } = await startTimer(tempDir());
    const set = await call('timer_set', { seconds: 60, note: 'tea is ready' });
    expect(set).toMatchObject({ isError: false, content: expect.stringContaining('t1') });
    expect(set.content).toContain('2030-01-01T00:01:00.000Z');
    tick(59_999);
    expect(fired()).toEqual([]);
    tick(1);
    expect(fired()).toEqual([['Timer t1 fired: tea is ready', 3]]);
    tick(3_600_000);
    expect(fired()).toHaveLength(1);
  });

  it('fires at an ISO time', async () => {
    const { call, tick, fired } = await startTimer(tempDir());
    expect((await call('timer_set', { at: '2030-01-01T01:00:00+01:00', note: 'now' })).isError).toBe(true); // that is T0: not in the future
    expect((await call('timer_set', { at: '2030-01-01T00:00:30Z', note: 'half a minute' })).isError).toBe(false);
    tick(29_000);
    expect(fired()).toEqual([]);
    tick(1_000);
    expect(fired()).toEqual([['Timer t1 fired: half a minute', 3]]);
  });

  it('fires a timer days ahead exactly when due, though waits are split', async () => {
    const { call, tick, fired, timers } = await startTimer(tempDir());
    await call('timer_set', { seconds: 3 * 86_400, note: 'far' });
    for (let hour = 0; hour < 71; hour++) tick(3_600_000);
    expect(fired()).toEqual([]);
    expect(timers.armed).toBe(1);
    tick(3_599_999);
    expect(fired()).toEqual([]);
    tick(1);
    expect(fired()).toEqual([['Timer t1 fired: far', 3]]);
  });

  it('cancel keeps a timer from firing', async () => {
    const { call, tick, fired, timers } = await startTimer(tempDir());
    await call('timer_set', { seconds: 10, note: 'a' });
    await call('timer_set', { seconds: 20, note: 'b' });
    expect(await call('timer_cancel', { id: 't1' })).toMatchObject({ isError: false, content: expect.stringContaining('cancelled') });
    expect(timers.armed).toBe(1);
    tick(30_000);
    expect(fired()).toEqual([['Timer t2 fired: b', 3]]);
    expect(await call('timer_cancel', { id: 't1' })).toMatchObject({ isError: true, content: expect.stringContaining("no timer 't1'") });
  });

  it('lists the set timers soonest first', async () => {
    const { call } = await startTimer(tempDir());
    expect((await call('timer_list')).content).toBe('No timers are set.');
    await call('timer_set', { seconds: 120, note: 'later' });
    await call('timer_set', { seconds: 60, note: 'sooner' });
    expect((await call('timer_list')).content.split('\n')).toEqual([
      't2  due 2030-01-01T00:01:00.000Z (in 1m)  sooner',
      't1  due 2030-01-01T00:02:00.000Z (in 2m)  later',
    ]);
  });

  it('raises again after 30 s an interrupt the kernel did not accept', async () => {
    const { call, tick, fired, api, timers } = await startTimer(tempDir());
    api.refuseInterrupts(1);
    await call('timer_set', { seconds: 1, note: 'persist' });
    tick(1_000);
    await vi.waitFor(() => expect(timers.armed).toBe(1)); // the refusal settled and the retry is armed
    expect(fired()).toEqual([]);
    expect(api.logs.join('\n')).toContain('not accepted');
    tick(29_999);
    expect(fired()).toEqual([]);
    tick(1);
    expect(fired()).toEqual([['Timer t1 fired: persist', 3]]);
  });
});

describe('timer plugin: durability', () => {
  it('keeps timers across a restart and fires the overdue ones at once, marked late', async () => {
    const dataDir = tempDir();
    const first = await startTimer(dataDir);
    await first.call('timer_set', { seconds: 60, note: 'overdue' });
    await first.call('timer_set', { seconds: 600, note: 'still ahead' });
    await first.running.stop();

    const second = await startTimer(dataDir, T0 + 120_000); // down for two minutes
    expect(second.fired()).toEqual([]);
    second.tick(0);
    expect(second.fired()).toEqual([
      ['Timer t1 fired late: overdue (it was due 2030-01-01T00:01:00.000Z, 1m ago, while the daemon was down)', 3],
    ]);
    second.tick(479_999);
    expect(second.fired()).toHaveLength(1);
    second.tick(1);
    expect(second.fired()[1]).toEqual(['Timer t2 fired: still ahead', 3]);
    await second.running.stop();

    const third = await startTimer(dataDir, T0 + 3_600_000);
    third.tick(0);
    expect(third.fired()).toEqual([]); // fired timers are gone from the store
    expect((await third.call('timer_set', { seconds: 5, note: 'n' })).content).toContain('t3'); // ids are never reused
  });

  it('stores the timers as JSON under <dataDir>/state/timer/, where the plugin loader does not look', async () => {
    const dataDir = tempDir();
    const { call } = await startTimer(dataDir);
    await call('timer_set', { seconds: 5, note: 'on disk' });
    const stored = JSON.parse(readFileSync(join(dataDir, 'state/timer/timers.json'), 'utf8'));
    expect(stored).toEqual({ version: 1, nextId: 2, timers: [{ id: 't1', dueAt: T0 + 5_000, setAt: T0, note: 'on disk' }] });
    expect(existsSync(join(dataDir, 'plugins'))).toBe(false);
  });

  it('moves a store an earlier build left under plugins/timer/ and keeps its timers', async () => {
    const dataDir = tempDir();
    mkdirSync(join(dataDir, 'plugins/timer'), { recursive: true });
    const legacy = { version: 1, nextId: 4, timers: [{ id: 't3', dueAt: T0 + 1_000, setAt: T0, note: 'old' }] };
    writeFileSync(join(dataDir, 'plugins/timer/timers.json'), JSON.stringify(legacy));
    const { tick, fired } = await startTimer(dataDir);
    expect(existsSync(join(dataDir, 'plugins/timer'))).toBe(false);
    expect(JSON.parse(readFileSync(join(dataDir, 'state/timer/timers.json'), 'utf8'))).toEqual(legacy);
    tick(1_000);
    expect(fired()).toEqual([['Timer t3 fired: old', 3]]);
  });

  it('fires into the conversation and reply route of the turn that set it', async () => {
    const { api, tick } = await startTimer(tempDir());
    const from = { conversation: 'cli:ada', replyTo: { channel: 'cli', target: 's4' } };
    await api.call('timer_set', { seconds: 1, note: 'stretch' }, from);
    await api.call('timer_set', { seconds: 2, note: 'from nowhere' });
    tick(2_000);
    expect(api.interrupts.map((i) => i.input)).toEqual([
      { text: 'Timer t1 fired: stretch', ...from },
      { text: 'Timer t2 fired: from nowhere' },
    ]);
  });

  it('refuses to start on a corrupt store rather than forget its timers', async () => {
    const dataDir = tempDir();
    mkdirSync(join(dataDir, 'state/timer'), { recursive: true });
    writeFileSync(join(dataDir, 'state/timer/timers.json'), '{ not json');
    await expect(startTimer(dataDir)).rejects.toBeInstanceOf(TimerStoreCorrupt);
  });
});

describe('timer plugin: arguments', () => {
  it.each([
    [{ seconds: 0, note: 'x' }, 'seconds'],
    [{ seconds: -5, note: 'x' }, 'seconds'],
    [{ seconds: '60', note: 'x' }, 'seconds'],
    [{ seconds: Number.NaN, note: 'x' }, 'seconds'],
    [{ seconds: 366 * 86_400, note: 'x' }, 'one year'],
    [{ note: 'x' }, 'exactly one'],
    [{ seconds: 5, at: '2030-01-02T00:00:00Z', note: 'x' }, 'exactly one'],
    [{ at: '2029-12-31T23:59:59Z', note: 'x' }, 'not in the future'],
    [{ at: '2030-01-02T00:00:00', note: 'x' }, 'timezone'],
    [{ at: 'tomorrow', note: 'x' }, 'ISO 8601'],
    [{ at: '2031-06-01T00:00:00Z', note: 'x' }, 'one year'],
    [{ seconds: 5 }, 'note'],
    [{ seconds: 5, note: '  ' }, 'note'],
  ])('timer_set refuses %j', async (args, why) => {
    const { call, timers } = await startTimer(tempDir());
    const reply = await call('timer_set', args);
    expect(reply.isError).toBe(true);
    expect(reply.content).toContain(why);
    expect(timers.armed).toBe(0);
  });

  it('timer_cancel refuses a missing id', async () => {
    const { call } = await startTimer(tempDir());
    expect(await call('timer_cancel', {})).toMatchObject({ isError: true, content: expect.stringContaining("'id'") });
  });
});
