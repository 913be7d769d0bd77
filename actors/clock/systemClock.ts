/** The real clock, timers and id source: the only place the running system reads the wall clock or arms a timer. */
import { randomUUID } from 'node:crypto';
import type { Clock, IdSource, Timers } from '../../events/index.ts';

export const systemClock: Clock = { now: () => Date.now() };

export const randomIds: IdSource = { next: () => randomUUID() };

/** The longest delay one Node timer takes (about 24.8 days): a longer one fires after 1 ms instead, with a warning. */
export const LONGEST_TIMER_MS = 2 ** 31 - 1;

/** A timer that may wait longer than one Node timer can: it waits in steps, and `timeout` is the step now armed. */
type SystemTimer = { timeout: NodeJS.Timeout };

/**
 * Real timers; they never keep the process alive on their own (the daemon's lifetime decides
 * that). A delay longer than LONGEST_TIMER_MS (a heartbeat due years ahead of a clock set back)
 * is waited in steps rather than firing at once, again and again.
 */
export const systemTimers: Timers = {
  setTimer: (fire, ms) => {
    const timer = {} as SystemTimer;
    const arm = (left: number): void => {
      const step = Math.min(Math.max(0, left), LONGEST_TIMER_MS);
      timer.timeout = setTimeout(() => (left > LONGEST_TIMER_MS ? arm(left - LONGEST_TIMER_MS) : fire()), step);
      timer.timeout.unref();
    };
    arm(ms);
    return timer;
  },
  clearTimer: (handle) => clearTimeout((handle as SystemTimer).timeout),
};

/**
 * Holds the process open until the returned function is called: a long-running command (the
 * daemon, `homed log --follow`) decides its own lifetime, since the timers above are unref'd
 * and waiting for a signal keeps nothing alive. Not a timer of the system's behaviour: nothing
 * is ever due.
 */
export const keepProcessAlive = (): (() => void) => {
  const hold = setInterval(() => undefined, 2 ** 30);
  return () => clearInterval(hold);
};
