/**
 * The daemon compacts its heap once it has been idle a while after work, when there is enough
 * to give back: never while a task runs or waits, once per idle stretch, and not after a stop.
 * Upkeep given as `first` (the recall index snapshot) runs before it in the same idle spell.
 */
import { describe, expect, it } from 'vitest';
import { compactWhenIdle } from '../../cli/idleCompaction.ts';
import { initialSchedulerState, type SchedulerFact, type SchedulerState } from '../../machines/scheduler/index.ts';
import { createManualTimers } from '../support/manualTimers.ts';

const IDLE_MS = 30_000;

const setup = (slackMb = 100, first?: () => Promise<void>, log?: (line: string) => void) => {
  const timers = createManualTimers();
  let state: SchedulerState = initialSchedulerState();
  const listeners = new Set<(facts: readonly SchedulerFact[]) => void>();
  const compactions: number[] = [];
  const stop = compactWhenIdle({
    scheduler: {
      state: () => state,
      onFacts: (listener) => {
        listeners.add(listener);
        return () => listeners.delete(listener);
      },
    },
    timers,
    compact: () => compactions.push(1),
    slackMb: () => slackMb,
    idleMs: IDLE_MS,
    ...(first ? { first } : {}),
    ...(log ? { log } : {}),
  });
  const task = {
    id: 't',
    source: 'cli',
    origin: 'user' as const,
    kind: 'interrupt' as const,
    level: 3 as const,
    preemptCount: 0,
    lastPreemptedAt: null,
  };
  /** The scheduler decides something, leaving it busy or idle. */
  const decided = (busy: boolean) => {
    state = { ...state, running: busy ? task : null };
    for (const listener of listeners) listener([{ type: 'TaskStarted', data: { taskId: 't', at: 0 } }]);
  };
  return { timers, decided, compactions, stop };
};

describe('compactWhenIdle', () => {
  it('compacts once, idleMs after the last task ended, and again only after more work', () => {
    const { timers, decided, compactions } = setup();
    timers.advance(10 * IDLE_MS);
    expect(compactions).toHaveLength(0); // no work yet: nothing to give back
    decided(true);
    timers.advance(10 * IDLE_MS);
    expect(compactions).toHaveLength(0); // busy all along
    decided(false);
    timers.advance(IDLE_MS - 1);
    expect(compactions).toHaveLength(0);
    timers.advance(1);
    expect(compactions).toHaveLength(1);
    timers.advance(10 * IDLE_MS);
    expect(compactions).toHaveLength(1); // once per idle stretch
    decided(true);
    decided(false);
    timers.advance(IDLE_MS);
    expect(compactions).toHaveLength(2);
  });

  it('starts the idle time again when work comes before it ends', () => {
    const { timers, decided, compactions } = setup();
    decided(false);
    timers.advance(IDLE_MS - 1);
    decided(true);
    timers.advance(IDLE_MS);
    expect(compactions).toHaveLength(0);
    decided(false);
    timers.advance(IDLE_MS);
    expect(compactions).toHaveLength(1);
  });

  it('leaves a heap with little to give back alone, and does nothing once stopped', () => {
    const small = setup(10);
    small.decided(false);
    small.timers.advance(IDLE_MS);
    expect(small.compactions).toHaveLength(0);
    const stopped = setup();
    stopped.decided(false);
    stopped.stop();
    stopped.timers.advance(IDLE_MS);
    stopped.decided(false);
    stopped.timers.advance(IDLE_MS);
    expect(stopped.compactions).toHaveLength(0);
    expect(stopped.timers.armed).toBe(0);
  });

  it('runs `first` before compacting, once at a time, and compacts only if still idle when it is done', async () => {
    const order: string[] = [];
    let finish = () => {};
    const first = () => {
      order.push('first');
      return new Promise<void>((resolve) => {
        finish = resolve;
      });
    };
    const { timers, decided, compactions } = setup(100, first);
    decided(false);
    timers.advance(IDLE_MS);
    expect(order).toEqual(['first']);
    expect(compactions).toHaveLength(0); // waits for it
    // Another idle spell ends while it still runs: it is not started twice.
    decided(true);
    decided(false);
    timers.advance(IDLE_MS);
    expect(order).toEqual(['first']);
    finish();
    await Promise.resolve();
    await Promise.resolve();
    expect(compactions).toHaveLength(1);
    // Work came while it ran: no compaction under it.
    decided(true);
    decided(false);
    timers.advance(IDLE_MS);
    decided(true);
    finish();
    await Promise.resolve();
    await Promise.resolve();
    expect(order).toEqual(['first', 'first']);
    expect(compactions).toHaveLength(1);
  });

  it('a stop waits for `first` under way, and compacts nothing after it', async () => {
    let finish = () => {};
    const first = () =>
      new Promise<void>((resolve) => {
        finish = resolve;
      });
    const { timers, decided, compactions, stop } = setup(100, first);
    decided(false);
    timers.advance(IDLE_MS);
    let stopped = false;
    const stopping = stop().then(() => {
      stopped = true;
    });
    await Promise.resolve();
    expect(stopped).toBe(false);
    finish();
    await stopping;
    expect(compactions).toHaveLength(0);
  });

  it('says so when `first` fails, and goes on watching', async () => {
    const lines: string[] = [];
    const { timers, decided, compactions } = setup(
      100,
      () => Promise.reject(new Error('disk full')),
      (line) => lines.push(line),
    );
    decided(false);
    timers.advance(IDLE_MS);
    await Promise.resolve();
    await Promise.resolve();
    expect(lines).toEqual(['idle upkeep failed: disk full']);
    expect(compactions).toHaveLength(0);
    decided(true);
    decided(false);
    expect(timers.armed).toBe(1);
  });
});
