/**
 * Relative words read against the day asked: whatever that day, a word for the past names a
 * non-empty span that has ended by the start of it, a word for the future one that starts after
 * it, and a month named without its year is the last such month begun by then. An utterance's
 * words are read the same way against when it was said.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { timeWindowsOf } from '../../../projections/memory/recall/recallQuery.ts';
import { spokenOfWindows } from '../../../projections/memory/recall/spokenOfTime.ts';

const DAY = 86_400_000;
const PAST = [
  'yesterday',
  'last night',
  'the day before yesterday',
  'last week',
  'last weekend',
  'this past weekend',
  'last Monday',
  'last Friday',
  'this past Sunday',
  'two weekends ago',
  '3 days ago',
  'a week ago',
  'two months ago',
  'last month',
  'last year',
  '昨天',
  '上周',
];
const FUTURE = ['tomorrow', 'next week', 'next month'];
const MONTHS = ['January', 'February', 'March', 'April', 'May', 'June', 'July', 'August', 'September', 'October', 'November', 'December'];

/** Any moment from 1990 to 2060. */
const moments = fc.integer({ min: Date.UTC(1990, 0, 1), max: Date.UTC(2060, 0, 1) });
const startOfDay = (at: number): number => at - (((at % DAY) + DAY) % DAY);
const RUNS = { numRuns: Number(process.env.FC_RUNS ?? 300) };

describe('relative time', () => {
  it('a word for the past names one non-empty span that ended by the start of the day asked', () => {
    fc.assert(
      fc.property(moments, fc.constantFrom(...PAST), (now, words) => {
        const windows = timeWindowsOf(`What happened ${words}?`, now);
        expect(windows).toHaveLength(1);
        expect(windows[0]!.from).toBeLessThan(windows[0]!.to);
        expect(windows[0]!.to).toBeLessThanOrEqual(startOfDay(now));
      }),
      RUNS,
    );
  });

  it('a word for the future names one non-empty span that starts after the day asked', () => {
    fc.assert(
      fc.property(moments, fc.constantFrom(...FUTURE), (now, words) => {
        const windows = timeWindowsOf(`What is planned for ${words}?`, now);
        expect(windows).toHaveLength(1);
        expect(windows[0]!.from).toBeGreaterThanOrEqual(startOfDay(now) + DAY);
        expect(windows[0]!.from).toBeLessThan(windows[0]!.to);
      }),
      RUNS,
    );
  });

  it('a month named without its year is the last such month begun by the day asked', () => {
    fc.assert(
      fc.property(moments, fc.integer({ min: 0, max: 11 }), (now, month) => {
        const [window] = timeWindowsOf(`What did they do in ${MONTHS[month]}?`, now);
        const from = new Date(window!.from);
        expect(from.getUTCMonth()).toBe(month);
        expect(from.getUTCDate()).toBe(1);
        expect(window!.from).toBeLessThanOrEqual(now);
        expect(now - window!.from).toBeLessThan(366 * DAY);
      }),
      RUNS,
    );
  });

  it('an utterance speaks of a day or week that moves with when it was said, whole weeks later a whole week later', () => {
    const dayOrWeek = PAST.filter((words) => !/month|year|月|年/.test(words));
    fc.assert(
      fc.property(
        moments,
        fc.integer({ min: -520, max: 520 }),
        fc.constantFrom(...dayOrWeek, 'tomorrow', 'next week'),
        (said, weeks, words) => {
          const shift = weeks * 7 * DAY;
          const moved = spokenOfWindows(`I did it ${words}`, said + shift);
          expect(moved).toHaveLength(1);
          expect(moved).toEqual(spokenOfWindows(`I did it ${words}`, said).map((w) => ({ from: w.from + shift, to: w.to + shift })));
        },
      ),
      RUNS,
    );
  });
});
