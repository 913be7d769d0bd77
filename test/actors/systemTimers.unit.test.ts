/**
 * The daemon's real timers: a delay longer than one Node timer takes (a heartbeat due years
 * ahead, after the clock was set back) waits in steps instead of firing at once and again every
 * millisecond; clearing it stops it whichever step is armed.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { LONGEST_TIMER_MS, systemTimers } from '../../actors/clock/systemClock.ts';

beforeEach(() => {
  vi.useFakeTimers();
});
afterEach(() => {
  vi.useRealTimers();
});

describe('systemTimers', () => {
  it('fires a short timer once, when due', () => {
    const fire = vi.fn();
    systemTimers.setTimer(fire, 500);
    vi.advanceTimersByTime(499);
    expect(fire).not.toHaveBeenCalled();
    vi.advanceTimersByTime(1);
    expect(fire).toHaveBeenCalledTimes(1);
  });

  it('waits a delay longer than one Node timer takes, in steps, and fires once when due', () => {
    const fire = vi.fn();
    const delay = 2 * LONGEST_TIMER_MS + 5_000;
    systemTimers.setTimer(fire, delay);
    vi.advanceTimersByTime(1_000);
    expect(fire).not.toHaveBeenCalled();
    vi.advanceTimersByTime(delay - 1_001);
    expect(fire).not.toHaveBeenCalled();
    vi.advanceTimersByTime(1);
    expect(fire).toHaveBeenCalledTimes(1);
    vi.advanceTimersByTime(10 * LONGEST_TIMER_MS);
    expect(fire).toHaveBeenCalledTimes(1);
  });

  it('is cleared whichever step is armed', () => {
    const fire = vi.fn();
    const timer = systemTimers.setTimer(fire, LONGEST_TIMER_MS + 60_000);
    vi.advanceTimersByTime(LONGEST_TIMER_MS + 1_000);
    systemTimers.clearTimer(timer);
    vi.advanceTimersByTime(120_000);
    expect(fire).not.toHaveBeenCalled();
  });
});
