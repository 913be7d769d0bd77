/** The real clock, timers and id source: the only place the running system reads the wall clock or arms a timer. */
import { randomFillSync, randomUUID } from 'node:crypto';
import type { Clock, IdSource, Timers } from '../../events/index.ts';

export const systemClock: Clock = { now: () => Date.now() };

export const randomIds: IdSource = { next: () => randomUUID() };

/** Random bytes drawn a pool at a time (one system call per 256 ids). */
const RANDOM_POOL_BYTES = 16 * 256;
const randomPool = Buffer.alloc(RANDOM_POOL_BYTES);
let randomPoolAt = RANDOM_POOL_BYTES;

const nextRandom16 = (): Buffer => {
  if (randomPoolAt === RANDOM_POOL_BYTES) {
    randomFillSync(randomPool);
    randomPoolAt = 0;
  }
  randomPoolAt += 16;
  return randomPool.subarray(randomPoolAt - 16, randomPoolAt);
};

/**
 * A UUIDv7 (RFC 9562) made at `ms` from 16 `random` bytes: the time in ms in its first 48 bits,
 * then the version, 74 random bits and the variant. Ids made later sort after (to the ms).
 */
export const uuidV7 = (ms: number, random: Uint8Array): string => {
  const bytes = Buffer.from(random.subarray(0, 16));
  bytes.writeUIntBE(Math.max(0, Math.min(ms, 2 ** 48 - 1)), 0, 6);
  bytes[6] = (bytes[6]! & 0x0f) | 0x70;
  bytes[8] = (bytes[8]! & 0x3f) | 0x80;
  const hex = bytes.toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
};

/**
 * The event log's ids: UUIDv7, so the events appended one after another sit together in the log's
 * id index instead of each on a random page of it (`npm run bench -- --only eventStore.append.ids`:
 * 187-200 µs a three-event append to a log of 500,000 events, 220-232 µs with random ids). Other ids
 * (turns, inputs) stay random: an approval is named by the start of its turn's id.
 */
export const timeOrderedIds: IdSource = { next: () => uuidV7(Date.now(), nextRandom16()) };

/** Resolves at the event loop's next check phase: timers, signals and I/O waiting behind long synchronous work run first. */
export const letOthersRun = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

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
