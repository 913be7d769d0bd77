/**
 * The daemon's heap. Every full collection compacts the old generation: the memory's index lives
 * as long as the daemon and is replaced piece by piece as the talk goes on, and without
 * compaction V8 keeps old pages that hold a few live objects each (in a process that ingested
 * 30,000 utterances, 189 MB of old space for 44 MB live, 385 MB resident after 15 s idle; with
 * it, 45 MB and 238 MB), so the resident size followed the high-water mark of what was ever
 * processed instead of what is held.
 *
 * One full garbage collection once the daemon has started. A start reads the log, the read
 * models and the recall index's snapshot whole; the heap grown for that keeps its garbage until
 * V8 next collects in full, which a daemon idling between messages may not do for hours (at
 * 100,000 utterances: 540 MB resident instead of about 310). Node gives the collector only to
 * code run with --expose-gc; the flag set now reaches a fresh context only, and is unset after.
 */
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

/** From now on every full collection compacts (V8's --compact-on-every-full-gc). */
export const compactOnFullCollections = (): void => setFlagsFromString('--compact-on-every-full-gc');

/** Collects in full; @returns the ms it took. */
export const collectStartGarbage = (): number => {
  setFlagsFromString('--expose-gc');
  try {
    const gc = runInNewContext('gc') as () => void;
    const started = performance.now();
    gc();
    return performance.now() - started;
  } finally {
    setFlagsFromString('--no-expose-gc');
  }
};
