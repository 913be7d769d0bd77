/**
 * Full, compacting garbage collections, for the daemon to make when nobody waits on it: once
 * started (a start reads the log, the read models and the recall index's snapshot whole), and
 * when it has been idle a while after work. V8 collects in full rarely in a daemon idling
 * between messages, and even then does not move what survives, so the old generation stays as
 * large as its busiest moment (at 100,000 utterances: ~140 MB committed for ~45 MB live).
 * Node gives the collector only to code run with --expose-gc; the flags set here reach a fresh
 * context only, and are unset after.
 */
import { getHeapSpaceStatistics, setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import type { Timers } from '../events/index.ts';

const MB = 1_048_576;

/**
 * Collects in full and moves what survives together, so the freed pages go back to the system;
 * @returns the ms it took and the MB the heap shrank by.
 */
export const compactHeap = (): Readonly<{ ms: number; freedMb: number }> => {
  setFlagsFromString('--expose-gc');
  setFlagsFromString('--compact-on-every-full-gc');
  try {
    const gc = runInNewContext('gc') as () => void;
    const heapBefore = process.memoryUsage().heapTotal;
    const started = performance.now();
    gc();
    return { ms: performance.now() - started, freedMb: (heapBefore - process.memoryUsage().heapTotal) / MB };
  } finally {
    setFlagsFromString('--no-compact-on-every-full-gc');
    setFlagsFromString('--no-expose-gc');
  }
};

/**
 * This process's RSS in MB once what a collection freed is back with the system: V8 unmaps freed
 * pages on a background thread shortly after, so a reading right after the collection still
 * counts them. Reads every 50 ms until two readings agree within 1 MB (at most 2 s).
 */
export const settledRssMb = async (timers: Timers): Promise<number> => {
  let last = process.memoryUsage().rss / MB;
  for (let waited = 0; waited < 2_000; waited += 50) {
    await new Promise((resolve) => timers.setTimer(() => resolve(undefined), 50));
    const now = process.memoryUsage().rss / MB;
    if (Math.abs(now - last) < 1) return now;
    last = now;
  }
  return last;
};

/** What the old generation holds committed but not live, in MB: what a compaction could give back. */
export const oldSpaceSlackMb = (): number => {
  const old = getHeapSpaceStatistics().find((space) => space.space_name === 'old_space');
  return old ? (old.space_size - old.space_used_size) / MB : 0;
};
