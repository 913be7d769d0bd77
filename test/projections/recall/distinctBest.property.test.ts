/** Asking the words for fewer hits first gives the distinct hits the whole pool gives. */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { distinctBest, distinctHits } from '../../../projections/memory/recall/recall.ts';
import type { RecallHit } from '../../../projections/memory/recall/recallIndex.ts';

/** Hits as a search ranks them, many standing for utterances another hit stands for already. */
const ranking = fc
  .array(fc.uniqueArray(fc.constantFrom('e1', 'e2', 'e3', 'e4', 'e5', 'e6'), { maxLength: 3 }), { maxLength: 60, size: 'max' })
  .map((sources) =>
    sources.map(
      (s, i): RecallHit => ({ id: `h${i}`, tier: 'graph', scope: 's', text: `hit ${i}`, cites: [], at: 0, sources: s, score: 60 - i }),
    ),
  );

describe('distinctBest (property)', () => {
  it('gives the first k distinct hits of a pool of 3k, asking for the whole pool only when the smaller one falls short', () => {
    fc.assert(
      fc.property(ranking, fc.integer({ min: 1, max: 15 }), (ranked, k) => {
        const asked: number[] = [];
        const search = (pool: number): RecallHit[] => {
          asked.push(pool);
          return ranked.slice(0, pool);
        };
        expect(distinctBest(search, k)).toEqual(distinctHits(ranked.slice(0, 3 * k), k));
        expect(asked[0]).toBeLessThan(3 * k);
        if (distinctHits(ranked.slice(0, asked[0]), k).length === k) expect(asked).toHaveLength(1);
      }),
      { numRuns: 2_000 },
    );
  });
});
