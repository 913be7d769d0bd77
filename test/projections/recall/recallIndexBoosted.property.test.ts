/**
 * A recall that names a month scores that month's items apart (few, and the only ones the time
 * boost reaches) and bounds the rest by what they can weigh without it: for any memory and any
 * such query, the ranking is exactly the one weighing every match gives.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { Bm25Index } from '../../../projections/memory/recall/bm25Index.ts';
import { RecallIndex, type RecallItem, type RecallWeight, type WeighedItem } from '../../../projections/memory/recall/recallIndex.ts';
import { focusOf, weighFor } from '../../../projections/memory/recall/recallWeights.ts';

const tokenize = (text: string): string[] => text.toLowerCase().match(/[a-z0-9]+/g) ?? [];
const DAY = 86_400_000;
const START = Date.UTC(2023, 3, 20);
const PEOPLE = ['Ada', 'Bo'];

const utterance = fc.record({
  person: fc.constantFrom(...PEOPLE),
  words: fc.array(fc.constantFrom('kiln', 'glaze', 'wheel', 'clay', 'tea', 'said', 'ada'), { minLength: 1, maxLength: 4 }),
  // Some speak of a time ("last week"), read against when they were said.
  speaksOf: fc.constantFrom('', '', 'last week', 'yesterday', 'in May 2023'),
  days: fc.integer({ min: 0, max: 3 }),
  tier: fc.constantFrom('context' as const, 'cold' as const, 'graph' as const),
});

describe('recall index with a month named (property)', () => {
  it('ranks exactly as weighing every match does', () => {
    fc.assert(
      fc.property(
        fc.array(utterance, { minLength: 1, maxLength: 60, size: 'max' }),
        fc.array(fc.nat(59), { maxLength: 8 }),
        fc.constantFrom('What did Ada glaze in May 2023?', 'Was the kiln hot in April 2023?', 'What did Bo say about tea last week?'),
        fc.integer({ min: 1, max: 10 }),
        // A word counting in its few most recent uses only, or the default (in every use, at these sizes).
        fc.constantFrom(2, 5, undefined),
        (utterances, removed, question, k, recentUses) => {
          const recent = recentUses ? { recentUses } : {};
          const index = new RecallIndex({ tokenize }, new Bm25Index({ compactAtLeast: 2, ...recent }));
          const full = new RecallIndex({ tokenize }, new Bm25Index({ compactAtLeast: 2, prune: false, ...recent }));
          let at = START;
          const items: RecallItem[] = utterances.map((u, i) => {
            at += u.days * DAY;
            const text = `${u.person} ${u.words.join(' ')} ${u.speaksOf}`.trim();
            return { id: `u${i}`, tier: u.tier, scope: 's', text, cites: [`D${i}`], at, person: u.person };
          });
          for (const each of [index, full]) {
            for (const item of items) each.put(item);
            for (const i of removed) if (i < items.length) each.remove(`u${i}`);
          }
          const weigh = weighFor(focusOf(question, PEOPLE, 's', undefined, at + DAY));
          const pruned = index.search(question, k, weigh);
          expect(pruned).toEqual(full.search(question, k, weigh));
          // Without the month's items apart, the bound is the boosted one for every item (where a word
          // counts in every use: else the month's items, told apart, count their older uses too).
          const unboosted: RecallWeight = Object.assign((item: WeighedItem) => weigh(item), { max: weigh.max });
          if (recentUses === undefined) expect(index.search(question, k, unboosted)).toEqual(pruned);
          // A smaller k ranks the start of a larger one's (what recall's smaller first pool relies on).
          expect(index.search(question, k + 7, weigh).slice(0, k)).toEqual(pruned);
        },
      ),
      { numRuns: 500 },
    );
  });
});
