/**
 * One full garbage collection once the daemon has started. A start reads the log, the read
 * models and the recall index's snapshot whole; the heap grown for that keeps its garbage until
 * V8 next collects in full, which a daemon idling between messages may not do for hours (at
 * 100,000 utterances: 540 MB resident instead of about 310). Node gives the collector only to
 * code run with --expose-gc; the flag set now reaches a fresh context only, and is unset after.
 */
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

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
