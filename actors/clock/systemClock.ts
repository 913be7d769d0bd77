/** The real clock, timers and id source: the only place the running system reads the wall clock or arms a timer. */
import { randomUUID } from 'node:crypto';
import type { Clock, IdSource, Timers } from '../../events/index.ts';

export const systemClock: Clock = { now: () => Date.now() };

export const randomIds: IdSource = { next: () => randomUUID() };

/** Real timers; they never keep the process alive on their own (the daemon's lifetime decides that). */
export const systemTimers: Timers = {
  setTimer: (fire, ms) => {
    const timer = setTimeout(fire, Math.max(0, ms));
    timer.unref();
    return timer;
  },
  clearTimer: (handle) => clearTimeout(handle as NodeJS.Timeout),
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
