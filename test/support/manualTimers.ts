/** Timers that fire only when the test advances them: timeouts without sleeping. */
import type { Timers } from '../../events/index.ts';

export type ManualTimers = Timers & { advance: (ms: number) => void; readonly armed: number };

export const createManualTimers = (): ManualTimers => {
  let now = 0;
  let nextHandle = 1;
  const due = new Map<number, { at: number; fire: () => void }>();
  return {
    setTimer: (fire, ms) => {
      const handle = nextHandle++;
      due.set(handle, { at: now + ms, fire });
      return handle;
    },
    clearTimer: (handle) => void due.delete(handle as number),
    advance: (ms) => {
      now += ms;
      const ready = [...due].filter(([, t]) => t.at <= now).sort(([, a], [, b]) => a.at - b.at);
      for (const [handle, timer] of ready) {
        due.delete(handle);
        timer.fire();
      }
    },
    get armed() {
      return due.size;
    },
  };
};
