/**
 * The restart decision as a property: for increasing crash times, `shouldGiveUp` and the machine
 * driven through the same crashes give up exactly when a brute-force oracle says the 4th crash
 * fell within 5 minutes of the first of the last four.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createActor, SimulatedClock } from 'xstate';
import { backoffDelayFor, pluginSupervisorMachine, shouldGiveUp } from '../../machines/pluginSupervisor/index.ts';

const WINDOW = 300_000;
const BACKOFF = [1_000, 2_000, 3_000];

/** Oracle: some `limit` crashes, the latest among them, all lie within `windowMs` before the latest. */
const oracle = (times: readonly number[], windowMs = WINDOW, limit = 4): boolean => {
  const last = times.at(-1);
  if (last === undefined) return false;
  let inWindow = 0;
  for (const t of times) if (last - t <= windowMs && t <= last) inWindow++;
  return inWindow >= limit;
};

/** Gaps between crashes: anything, but biased to land the 4th crash on the 5-minute edge. */
const gap = (min: number) =>
  fc.oneof(
    fc.integer({ min, max: 400_000 }),
    fc.constantFrom(100_000, 99_999, 100_001, 150_000, 149_999, 150_001, 294_000, 294_001),
    fc.integer({ min, max: min + 5 }),
  );
/** Three gaps that put a crash exactly 5 min − 1 ms, 5 min or 5 min + 1 ms after the one three before it. */
const edgeGaps = (min: number) =>
  fc
    .tuple(fc.integer({ min, max: 140_000 }), fc.integer({ min, max: 140_000 }), fc.constantFrom(-1, 0, 1))
    .map(([a, b, delta]) => [a, b, WINDOW + delta - a - b]);
const gaps = (min: number) =>
  fc.oneof(
    fc.array(gap(min), { minLength: 0, maxLength: 12 }),
    fc
      .tuple(fc.array(gap(min), { maxLength: 4 }), edgeGaps(min), fc.array(gap(min), { maxLength: 4 }))
      .map(([before, edge, after]) => [...before, ...edge, ...after]),
  );
const crashTimes = (min: number) =>
  fc.tuple(fc.nat({ max: 10_000 }), gaps(min)).map(([start, gs]) => {
    const times = [start];
    for (const g of gs) times.push(times.at(-1)! + g);
    return times;
  });

describe('shouldGiveUp', () => {
  it('is true on the 4th crash at exactly 5 minutes after the first of the last four, false at 5 min + 1 ms', () => {
    expect(shouldGiveUp([0, 1, 2, 300_000])).toBe(true);
    expect(shouldGiveUp([0, 1, 2, 300_001])).toBe(false);
    expect(shouldGiveUp([0, 1, 2])).toBe(false);
    expect(shouldGiveUp([-500_000, 0, 1, 2, 300_000])).toBe(true);
    expect(shouldGiveUp([0, 10, 20, 300_001, 300_002])).toBe(true);
  });

  it('agrees with the brute-force oracle for any increasing crash times', () => {
    fc.assert(
      fc.property(crashTimes(1), (times) => {
        for (let i = 1; i <= times.length; i++) {
          const prefix = times.slice(0, i);
          expect(shouldGiveUp(prefix)).toBe(oracle(prefix));
        }
      }),
      { numRuns: 500 },
    );
  });

  it('agrees with the oracle for any window and limit', () => {
    fc.assert(
      fc.property(crashTimes(1), fc.integer({ min: 1, max: 600_000 }), fc.integer({ min: 1, max: 6 }), (times, windowMs, limit) => {
        expect(shouldGiveUp(times, windowMs, limit)).toBe(oracle(times, windowMs, limit));
      }),
      { numRuns: 500 },
    );
  });
});

describe('pluginSupervisorMachine restart decision', () => {
  it('gives up on exactly the crash the oracle names, and only then', () => {
    fc.assert(
      fc.property(crashTimes(BACKOFF.at(-1)!), (times) => {
        const clock = new SimulatedClock();
        const actor = createActor(pluginSupervisorMachine, { input: { plugin: 'p' }, clock }).start();
        const first = times[0]!;
        clock.set(first);
        actor.send({ type: 'START', at: first });
        const expectedGiveUp = times.findIndex((_, i) => oracle(times.slice(0, i + 1)));
        let gaveUpAt = -1;
        for (const [i, at] of times.entries()) {
          clock.set(at); // the backoff (≤ 3 s, gaps ≥ 3 s) has elapsed: the plugin is starting again
          expect(actor.getSnapshot().value).toBe('starting');
          actor.send({ type: 'PROCESS_CRASHED', at, error: 'handshake failed' });
          const { value, context } = actor.getSnapshot();
          if (value === 'gaveUp') {
            gaveUpAt = i;
            break;
          }
          expect(value).toBe('backoff');
          expect(context.restartDelayMs).toBe(backoffDelayFor(context.crashTimes.length, BACKOFF));
        }
        expect(gaveUpAt).toBe(expectedGiveUp);
        if (gaveUpAt >= 0) {
          clock.increment(600_000);
          expect(actor.getSnapshot().value).toBe('gaveUp');
        }
      }),
      { numRuns: 300 },
    );
  });
});
