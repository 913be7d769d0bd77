/** Entity merge proposals: bigram Jaccard over normalised names, strictly above 0.75. */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  bigramJaccard,
  bigramsOf,
  entitySimilarity,
  MERGE_THRESHOLD,
  proposeMerges,
  type MergeCandidateEntity,
  type MergeProposal,
} from '../../machines/memory/index.ts';

describe('bigramJaccard', () => {
  it('normalises case, NFKC width and whitespace before comparing', () => {
    expect(bigramJaccard('Zhang  Wei', 'zhang wei')).toBe(1);
    expect(bigramJaccard('ＡＢＣ', 'abc')).toBe(1);
    expect(bigramJaccard(' alice\tchen ', 'Alice Chen')).toBe(1);
  });

  it('counts character bigrams; a one-character name is its own bigram', () => {
    expect([...bigramsOf('abcd')]).toEqual(['ab', 'bc', 'cd']);
    expect([...bigramsOf('猫')]).toEqual(['猫']);
    expect(bigramJaccard('abcd', 'abce')).toBe(2 / 4);
    expect(bigramJaccard('猫', '狗')).toBe(0);
    expect(bigramJaccard('张三丰', '张三')).toBe(1 / 2);
  });

  it('empty against non-empty is 0', () => {
    expect(bigramJaccard('', 'abc')).toBe(0);
  });

  it('is symmetric, in [0, 1], and 1 for identical names (property)', () => {
    fc.assert(
      fc.property(fc.string(), fc.string(), (a, b) => {
        const ab = bigramJaccard(a, b);
        expect(ab).toBe(bigramJaccard(b, a));
        expect(ab).toBeGreaterThanOrEqual(0);
        expect(ab).toBeLessThanOrEqual(1);
        expect(bigramJaccard(a, a)).toBe(1);
      }),
      { numRuns: 1000 },
    );
  });
});

describe('proposeMerges', () => {
  // 'abcde' vs 'abcdef': bigrams {ab,bc,cd,de} ⊂ {ab,bc,cd,de,ef} → 4/5 = 0.8
  // 'abcd' vs 'abcde': {ab,bc,cd} ⊂ {ab,bc,cd,de} → 3/4 = 0.75 exactly
  it('proposes strictly above the threshold: 0.75 exactly is not proposed', () => {
    expect(bigramJaccard('abcd', 'abcde')).toBe(0.75);
    expect(
      proposeMerges([
        { id: 'e1', name: 'abcd' },
        { id: 'e2', name: 'abcde' },
      ]),
    ).toEqual([]);
    expect(
      proposeMerges([
        { id: 'e1', name: 'abcde' },
        { id: 'e2', name: 'abcdef' },
      ]),
    ).toEqual([{ a: 'e1', b: 'e2', similarity: 0.8 }]);
  });

  it('lists each pair once with a < b, sorted by similarity then ids', () => {
    const proposals = proposeMerges([
      { id: 'z', name: 'Alice Chen' },
      { id: 'm', name: 'alice chen' },
      { id: 'b', name: 'abcde' },
      { id: 'a', name: 'abcdef' },
      { id: 'q', name: 'Bob' },
    ]);
    expect(proposals).toEqual([
      { a: 'm', b: 'z', similarity: 1 },
      { a: 'a', b: 'b', similarity: 0.8 },
    ]);
  });

  it('considers aliases: the best name/alias pair counts', () => {
    const proposals = proposeMerges([
      { id: 'e1', name: 'Robert Smith', aliases: ['Bobby'] },
      { id: 'e2', name: 'bobby' },
      { id: 'e3', name: 'R. Smith', aliases: ['', 'Robert Smith'] },
    ]);
    expect(proposals).toEqual([
      { a: 'e1', b: 'e2', similarity: 1 },
      { a: 'e1', b: 'e3', similarity: 1 },
    ]);
  });

  it('never pairs an entity with itself or with a blank name', () => {
    expect(
      proposeMerges([
        { id: 'e1', name: 'x' },
        { id: 'e1', name: 'x' },
        { id: 'e2', name: '  ' },
        { id: 'e3', name: '' },
      ]),
    ).toEqual([]);
  });

  it('honours a custom threshold', () => {
    expect(
      proposeMerges(
        [
          { id: 'e1', name: 'abcd' },
          { id: 'e2', name: 'abcde' },
        ],
        0.7,
      ),
    ).toHaveLength(1);
  });

  it('property: pairs are ordered, unique, strictly above the threshold, and match a direct recount', () => {
    const entity = fc.record({
      id: fc.constantFrom('a', 'b', 'c', 'd', 'e'),
      name: fc.string({ unit: fc.constantFrom('a', 'b', 'c', ' ', 'A'), maxLength: 6 }),
    });
    fc.assert(
      fc.property(fc.array(entity, { maxLength: 6 }), fc.constantFrom(0, 0.5, MERGE_THRESHOLD), (entities, threshold) => {
        const proposals = proposeMerges(entities, threshold);
        const keys = proposals.map((p) => `${p.a}|${p.b}`);
        expect(new Set(keys).size).toBe(keys.length);
        for (const p of proposals) {
          expect(p.a < p.b).toBe(true);
          expect(p.similarity).toBeGreaterThan(threshold);
        }
        for (let i = 1; i < proposals.length; i += 1) expect(proposals[i - 1]!.similarity).toBeGreaterThanOrEqual(proposals[i]!.similarity);
        expect(proposeMerges([...entities].reverse(), threshold)).toEqual(proposals);
      }),
      { numRuns: 500 },
    );
  });

  /** Every pair compared: what the prefix-filtered join must find exactly. */
  const everyPair = (entities: readonly MergeCandidateEntity[], threshold: number): MergeProposal[] => {
    const best = new Map<string, MergeProposal>();
    for (const [i, x] of entities.entries()) {
      for (const y of entities.slice(i + 1)) {
        const similarity = entitySimilarity(x, y);
        if (x.id === y.id || !(similarity > threshold)) continue;
        const [a, b] = x.id < y.id ? [x.id, y.id] : [y.id, x.id];
        if ((best.get(`${a}|${b}`)?.similarity ?? -1) < similarity) best.set(`${a}|${b}`, { a, b, similarity });
      }
    }
    return [...best.values()].sort((p, q) => q.similarity - p.similarity || (p.a < q.a ? -1 : p.a > q.a ? 1 : p.b < q.b ? -1 : 1));
  };

  it('property: finds exactly the pairs comparing every pair finds, at any threshold', () => {
    const name = fc.string({ unit: fc.constantFrom('a', 'b', 'c', 'd', 'e', ' ', 'A', '猫'), maxLength: 9 });
    const entity = fc.record({
      id: fc.constantFrom('a', 'b', 'c', 'd', 'e', 'f', 'g', 'h'),
      name,
      aliases: fc.option(fc.array(name, { maxLength: 2 }), { nil: undefined }),
    });
    fc.assert(
      fc.property(
        fc.array(entity, { maxLength: 14 }),
        fc.constantFrom(0, 0.3, 0.5, 0.6, 0.7, MERGE_THRESHOLD, 0.8, 0.9, 0.99),
        (entities, threshold) => {
          expect(proposeMerges(entities, threshold)).toEqual(everyPair(entities, threshold));
        },
      ),
      { numRuns: 1000 },
    );
  });
});
