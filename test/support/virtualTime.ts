/**
 * One virtual time for a whole system under test: a clock and the timers armed against it,
 * moving only when the test advances them. Every timer due by the new time fires, in due
 * order, including one armed (already due) by another timer's firing.
 */
import { VirtualClock, type Timers } from '../../events/index.ts';

export type VirtualTime = Readonly<{
  clock: VirtualClock;
  timers: Timers;
  advance(ms: number): void;
  /** Timers armed and not yet fired or cleared. */
  readonly armed: number;
}>;

export const createVirtualTime = (startMs: number): VirtualTime => {
  const clock = new VirtualClock(startMs);
  let nextHandle = 1;
  const due = new Map<number, { at: number; fire: () => void }>();
  const nextDue = (): [number, { at: number; fire: () => void }] | undefined =>
    [...due].filter(([, timer]) => timer.at <= clock.now()).sort(([ha, a], [hb, b]) => a.at - b.at || ha - hb)[0];
  return {
    clock,
    timers: {
      setTimer: (fire, ms) => {
        const handle = nextHandle++;
        due.set(handle, { at: clock.now() + Math.max(0, ms), fire });
        return handle;
      },
      clearTimer: (handle) => void due.delete(handle as number),
    },
    advance: (ms) => {
      clock.advance(ms);
      for (let next = nextDue(); next; next = nextDue()) {
        due.delete(next[0]);
        next[1].fire();
      }
    },
    get armed() {
      return due.size;
    },
  };
};
