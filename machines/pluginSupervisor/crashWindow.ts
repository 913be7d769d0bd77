/**
 * The restart rule of the plugin supervisor, as pure functions of crash times (ms, from the
 * crash events' `at`): give up on the 4th crash within 5 minutes, back off 1 s / 2 s / 3 s.
 */

/** Five minutes: the window in which four crashes make the supervisor give up. */
export const CRASH_WINDOW_MS = 300_000;
/** The crash that makes the supervisor give up (the 4th in the window). */
export const CRASH_LIMIT = 4;

/**
 * True when the latest crash is the `limit`-th within `windowMs`: it falls at most `windowMs`
 * after the first of the last `limit` crashes. `crashTimes` must be in ascending order.
 *
 * @example
 * shouldGiveUp([0, 1_000, 2_000, 300_000]); // true  (exactly 5 min after the first)
 * shouldGiveUp([0, 1_000, 2_000, 300_001]); // false (5 min + 1 ms)
 */
export const shouldGiveUp = (crashTimes: readonly number[], windowMs = CRASH_WINDOW_MS, limit = CRASH_LIMIT): boolean => {
  if (limit < 1 || crashTimes.length < limit) return false;
  const last = crashTimes[crashTimes.length - 1]!;
  const firstOfLast = crashTimes[crashTimes.length - limit]!;
  return last - firstOfLast <= windowMs;
};

/** The crashes that still count at time `at`: those at most `windowMs` before it. */
export const crashesInWindow = (crashTimes: readonly number[], at: number, windowMs = CRASH_WINDOW_MS): number[] =>
  crashTimes.filter((t) => at - t <= windowMs);

/**
 * The wait before restart number `attempt` (1-based: the 1st crash of the window waits
 * `backoffMs[0]`); attempts past the table wait its last entry.
 */
export const backoffDelayFor = (attempt: number, backoffMs: readonly number[]): number =>
  backoffMs[Math.min(Math.max(attempt, 1), backoffMs.length) - 1] ?? 0;
