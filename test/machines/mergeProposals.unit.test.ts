/** Entity merge proposals: bigram Jaccard over normalised names, strictly above 0.75. */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { bigramJaccard, bigramsOf, MERGE_THRESHOLD, proposeMerges } from '../../machines/memory/index.ts';

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
});
