/**
 * The injection bound as a pure decision: a plugin's inputs waiting in the scheduler are capped,
 * its interrupts come from a token bucket on the kernel's clock. Given/when/then per rule, then
 * properties against an independent model (credit in milliseconds) and the rate a bucket promises.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  DEFAULT_INJECTION_BOUNDS,
  decideInjection,
  heldBy,
  InjectionThrottled,
  type InjectionBounds,
  type InjectionDecision,
  type InterruptBucket,
} from '../../plugins/host/injectionBounds.ts';
import { INJECTION_THROTTLED } from '../../plugins/sdk/index.ts';

const BOUNDS: InjectionBounds = { waitingAtMost: 4, interruptBurst: 3, interruptEveryMs: 1_000 };

type Ask = Readonly<{ kind: 'queued' | 'interrupt'; waiting: number; at: number }>;

/** Runs asks through the decision, threading the bucket; each decision in order. */
const run = (asks: readonly Ask[], bounds = BOUNDS): InjectionDecision[] => {
  let bucket: InterruptBucket | null = null;
  return asks.map((ask) => {
    const decision = decideInjection(bucket, ask, bounds);
    bucket = decision.bucket;
    return decision;
  });
};

const interrupts = (times: readonly number[], waiting = 0): Ask[] => times.map((at) => ({ kind: 'interrupt', waiting, at }));

describe('the waiting bound', () => {
  it('given 3 of 4 waiting, admits one more; given 4, refuses it saying which bound and its number', () => {
    expect(decideInjection(null, { kind: 'queued', waiting: 3, at: 0 }, BOUNDS).admitted).toBe(true);
    expect(decideInjection(null, { kind: 'queued', waiting: 4, at: 0 }, BOUNDS)).toMatchObject({
      admitted: false,
      bound: 'waiting',
      limit: 4,
      waiting: 4,
    });
  });

  it('refuses an interrupt over the waiting bound without spending an interrupt', () => {
    const refused = decideInjection(null, { kind: 'interrupt', waiting: 9, at: 0 }, BOUNDS);
    expect(refused).toMatchObject({ admitted: false, bound: 'waiting' });
    expect(refused.bucket.tokens).toBe(BOUNDS.interruptBurst);
  });

  it('counts what the scheduler holds of one source: running, suspended, queued, in the inbox and pending, not what a stop cancelled', () => {
    let n = 0;
    const task = (source: string) => ({ id: `${source}-${++n}`, source });
    const state = {
      running: task('a'),
      stack: [task('a'), task('b')],
      queue: [task('a')],
      inbox: [task('b'), task('a')],
      pending: [task('a'), task('cli')],
      cancelBudget: [],
    };
    expect(heldBy(state, 'a')).toBe(5);
    expect(heldBy(state, 'b')).toBe(2);
    expect(heldBy({ ...state, running: null }, 'cli')).toBe(1);
    // Waiting inputs a stop cancelled end without running: they no longer count.
    expect(heldBy({ ...state, cancelBudget: [state.queue[0]!.id, state.inbox[1]!.id] }, 'a')).toBe(3);
  });
});

describe('the interrupt bucket', () => {
  it('given a full bucket of 3, admits 3 interrupts at once and refuses the 4th, saying when the next is allowed', () => {
    const decisions = run(interrupts([0, 0, 0, 0]));
    expect(decisions.map((d) => d.admitted)).toEqual([true, true, true, false]);
    expect(decisions[3]).toMatchObject({ bound: 'interrupts', limit: 3, retryInMs: 1_000 });
  });

  it('gains one interrupt per interval, and none while the clock goes back', () => {
    expect(run(interrupts([0, 0, 0, 999, 1_000, 1_000])).map((d) => d.admitted)).toEqual([true, true, true, false, true, false]);
    expect(run(interrupts([5_000, 5_000, 5_000, 0, 2_000])).map((d) => d.admitted)).toEqual([true, true, true, false, false]);
  });

  it('never holds more than its burst, however long the plugin was quiet', () => {
    const decisions = run(interrupts([0, 1_000_000, 1_000_000, 1_000_000, 1_000_000]));
    expect(decisions.map((d) => d.admitted)).toEqual([true, true, true, true, false]);
  });

  it('leaves queued inputs alone: an empty bucket still admits them', () => {
    const decisions = run([...interrupts([0, 0, 0]), { kind: 'queued', waiting: 3, at: 0 }]);
    expect(decisions.at(-1)!.admitted).toBe(true);
  });
});

describe('the refusal a plugin receives', () => {
  it('is typed INJECTION_THROTTLED, names the bound and its number, and says to wait for its inputs to be handled', () => {
    const waiting = decideInjection(null, { kind: 'queued', waiting: 32, at: 0 });
    if (waiting.admitted) throw new Error('expected a refusal');
    const error = new InjectionThrottled('spammer', waiting, DEFAULT_INJECTION_BOUNDS);
    expect(error).toMatchObject({ code: INJECTION_THROTTLED, bound: 'waiting', limit: 32, plugin: 'spammer' });
    expect(error.message).toMatch(/'spammer' already has 32 inputs waiting .*32 is the most .*wait until some of them are handled/);

    const [, , , burst] = run(interrupts([0, 0, 0, 250]));
    if (burst!.admitted) throw new Error('expected a refusal');
    const interrupt = new InjectionThrottled('spammer', burst!, BOUNDS);
    expect(interrupt).toMatchObject({ code: INJECTION_THROTTLED, bound: 'interrupts', limit: 3 });
    expect(interrupt.message).toMatch(
      /its 3 interrupts and gains one every 1 s .*next is allowed in 1 s.*Wait for its inputs to be handled/,
    );
  });
});

/** Independent model: credit in ms, capped at burst × interval; an interrupt costs one interval. */
const modelAdmits = (asks: readonly Ask[], bounds: InjectionBounds): boolean[] => {
  const cap = bounds.interruptBurst * bounds.interruptEveryMs;
  let credit = cap;
  let last: number | undefined;
  return asks.map(({ kind, waiting, at }) => {
    const now = Math.max(at, last ?? at);
    credit = Math.min(cap, credit + (now - (last ?? now)));
    last = now;
    if (waiting >= bounds.waitingAtMost) return false;
    if (kind === 'queued') return true;
    if (credit < bounds.interruptEveryMs) return false;
    credit -= bounds.interruptEveryMs;
    return true;
  });
};

const arbBounds = fc.record({
  waitingAtMost: fc.integer({ min: 1, max: 40 }),
  interruptBurst: fc.integer({ min: 1, max: 10 }),
  interruptEveryMs: fc.integer({ min: 1, max: 20_000 }),
});

/**
 * Asks at increasing times (gaps from 0 to a minute). Up to 120 of them (size 'max'): fast-check's
 * default stops at about ten, so a bucket emptied and then refilled in part was rarely seen.
 */
const arbAsks = (maxWaiting: number) =>
  fc
    .array(
      fc.record({
        kind: fc.constantFrom('queued' as const, 'interrupt' as const),
        waiting: fc.integer({ min: 0, max: maxWaiting }),
        gap: fc.oneof(fc.constant(0), fc.integer({ min: 0, max: 60_000 })),
      }),
      { maxLength: 120, size: 'max' },
    )
    .map((steps) => {
      let at = 1_000_000;
      return steps.map(({ kind, waiting, gap }) => {
        at += gap;
        return { kind, waiting, at };
      });
    });

describe('properties', () => {
  it('decides exactly as the credit model does, for any bounds and asks (clock going back included)', () => {
    fc.assert(
      fc.property(arbBounds, arbAsks(50), fc.array(fc.integer({ min: 0, max: 119 })), (bounds, asks, setBack) => {
        // Some asks carry a time from before the previous one: a clock set back.
        const skewed = asks.map((ask, i) => (setBack.includes(i) ? { ...ask, at: ask.at - 30_000 } : ask));
        expect(run(skewed, bounds).map((d) => d.admitted)).toEqual(modelAdmits(skewed, bounds));
      }),
      { numRuns: 300 },
    );
  });

  it('admits nothing at or over the waiting bound, and every queued input under it', () => {
    fc.assert(
      fc.property(arbBounds, arbAsks(50), (bounds, asks) => {
        run(asks, bounds).forEach((decision, i) => {
          const ask = asks[i]!;
          if (ask.waiting >= bounds.waitingAtMost) expect(decision).toMatchObject({ admitted: false, bound: 'waiting' });
          else if (ask.kind === 'queued') expect(decision.admitted).toBe(true);
        });
      }),
    );
  });

  it('admits at most burst + ⌊span / interval⌋ interrupts over any span of time', () => {
    fc.assert(
      fc.property(arbBounds, arbAsks(0), (bounds, asks) => {
        const admitted = run(asks, bounds).map((d, i) => d.admitted && asks[i]!.kind === 'interrupt');
        for (let i = 0; i < asks.length; i++) {
          let count = 0;
          for (let j = i; j < asks.length; j++) {
            if (admitted[j]) count++;
            const allowance = bounds.interruptBurst + Math.floor((asks[j]!.at - asks[i]!.at) / bounds.interruptEveryMs);
            // expect only on a breach: 120 asks make 7,000 spans a run.
            if (count > allowance) expect(count, `from ask ${i} to ask ${j}`).toBeLessThanOrEqual(allowance);
          }
        }
      }),
    );
  });

  it('tells the truth about when to retry: an interrupt refused for the bucket is admitted retryInMs later', () => {
    fc.assert(
      fc.property(arbBounds, arbAsks(0), (bounds, asks) => {
        let bucket: InterruptBucket | null = null;
        for (const ask of asks) {
          const decision = decideInjection(bucket, { ...ask, kind: 'interrupt' }, bounds);
          if (!decision.admitted && decision.bound === 'interrupts') {
            expect(decision.retryInMs).toBeGreaterThan(0);
            const retry = decideInjection(decision.bucket, { kind: 'interrupt', waiting: 0, at: ask.at + decision.retryInMs }, bounds);
            expect(retry.admitted).toBe(true);
            const early = decideInjection(decision.bucket, { kind: 'interrupt', waiting: 0, at: ask.at + decision.retryInMs - 1 }, bounds);
            expect(early.admitted).toBe(false);
          }
          bucket = decision.bucket;
        }
      }),
    );
  });
});
