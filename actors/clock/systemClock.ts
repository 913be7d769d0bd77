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

/** Runs `fn` after the I/O already waiting has been handled: pieces arriving together are handled together. */
export const afterPendingIo = (fn: () => void): void => {
  setImmediate(fn);
};
