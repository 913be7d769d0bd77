/** The incremental BM25 index: Okapi scoring, idf, removal (with the counts added), dropping dead entries, deterministic ties. */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  Bm25CountsMismatch,
  Bm25Index,
  type Bm25Document,
  type Bm25Options,
  countsOf,
  NO_TAG,
} from '../../../projections/memory/recall/bm25Index.ts';

const indexOf = (docs: readonly Bm25Document[], options?: Bm25Options): Bm25Index => {
  const index = new Bm25Index(options);
  for (const d of docs) index.add(d);
  return index;
};

const doc = (id: string, text: string): Bm25Document => ({ id, tokens: text.split(' ').filter(Boolean) });

const CORPUS = [
  doc('a', 'coffee morning walk coffee'),
  doc('b', 'coffee shop downtown'),
  doc('c', 'coffee with friends'),
  doc('d', 'pottery class coffee'),
  doc('e', 'evening run park'),
];

/** Words in few documents, beside 'ada' (a speaker's name, in most) and 'said' (in about half): the common-terms tests' vocabulary. */
const RARE = fc.constantFrom('kiln', 'glaze', 'wheel', 'clay', 'tea');
// 'ada' is in most documents (up to 300 times in one), 'said' in about half.
const SKEWED_DOCUMENT = fc
  .tuple(fc.array(RARE, { maxLength: 4 }), fc.integer({ min: 0, max: 9 }), fc.boolean(), fc.integer({ min: 1, max: 300 }))
  .map(([words, ada, said, times]) => [
    ...words,
    ...(ada > 0 ? Array<string>(ada === 9 ? times : ada).fill('ada') : []),
    ...(said ? ['said'] : []),
  ]);
const COMMON_DOCUMENTS = fc.array(SKEWED_DOCUMENT, { minLength: 1, maxLength: 60, size: 'max' });
const REMOVED = fc.array(fc.nat(59), { maxLength: 10 });
const COMMON_QUERY = fc.array(fc.oneof(RARE, fc.constantFrom('ada', 'said')), { minLength: 1, maxLength: 5 });

/** In how many of its most recent uses a term counts: a few (so 'ada' and 'said' count only in their latest), or the default. */
const RECENT = fc.constantFrom(1, 2, 5, undefined);

/** The same documents, some removed, in an index that prunes its searches and in one that scores every match of its terms' recent uses. */
const prunedAndFull = (documents: readonly string[][], removed: readonly number[], recentUses?: number) => {
  const recent = recentUses ? { recentUses } : {};
  const pruned = new Bm25Index({ compactAtLeast: 2, ...recent });
  const full = new Bm25Index({ prune: false, ...recent });
  for (const index of [pruned, full]) {
    // Each tagged with its number, as the recall index tags a document with its item's slot.
    for (const [i, words] of documents.entries()) index.addCounts(`d${i}`, countsOf(words), i);
    for (const i of new Set(removed)) if (i < documents.length) index.remove(`d${i}`, countsOf(documents[i]!));
  }
  return { pruned, full };
};

describe('Bm25Index', () => {
  it('computes idf as ln(1 + (N − df + 0.5) / (df + 0.5))', () => {
    const index = indexOf(CORPUS);
    expect(index.idf('coffee')).toBeCloseTo(Math.log(1 + (5 - 4 + 0.5) / (4 + 0.5)), 12);
    expect(index.idf('pottery')).toBeCloseTo(Math.log(1 + (5 - 1 + 0.5) / (1 + 0.5)), 12);
    expect(index.idf('absent')).toBeCloseTo(Math.log(1 + 5.5 / 0.5), 12);
  });

  it('scores one document exactly by the Okapi formula', () => {
    const index = indexOf(CORPUS);
    const avgdl = (4 + 3 + 3 + 3 + 3) / 5;
    const idf = Math.log(1 + (5 - 1 + 0.5) / (1 + 0.5));
    const expected = (idf * (1 * 2.2)) / (1 + 1.2 * (1 - 0.75 + (0.75 * 3) / avgdl));
    const [hit] = index.search(['pottery'], 10);
    expect(hit?.id).toBe('d');
    expect(hit?.score).toBeCloseTo(expected, 12);
  });

  it('scores a term counted 255 times and more by what it is counted, as one counted fewer', () => {
    for (const tf of [254, 255, 256, 1_000, 70_000]) {
      const index = new Bm25Index();
      index.addCounts(
        'many',
        new Map([
          ['kiln', tf],
          ['clay', 1],
        ]),
      );
      index.addCounts('other', new Map([['glaze', 3]]));
      const avgdl = (tf + 1 + 3) / 2;
      const idf = Math.log(1 + (2 - 1 + 0.5) / (1 + 0.5));
      const expected = (idf * (tf * 2.2)) / (tf + 1.2 * (1 - 0.75 + (0.75 * (tf + 1)) / avgdl));
      expect(index.search(['kiln'], 1)[0]?.score).toBeCloseTo(expected, 12);
      expect(Bm25Index.fromState(index.toState()).search(['kiln'], 1)).toEqual(index.search(['kiln'], 1));
      expect(
        index.remove(
          'many',
          new Map([
            ['kiln', tf],
            ['clay', 1],
          ]),
        ),
      ).toBe(true);
    }
  });

  it('ranks a document matching a rare term above ones matching only a common term', () => {
    const index = indexOf(CORPUS);
    const hits = index.search(['coffee', 'pottery'], 10);
    expect(hits[0]?.id).toBe('d');
    expect(hits.map((h) => h.id)).toEqual(['d', 'a', 'b', 'c']); // a: coffee twice; b, c tie → by id
    expect(hits.map((h) => h.score)).toEqual([...hits.map((h) => h.score)].sort((x, y) => y - x));
  });

  it('lets one rare term outweigh a common term repeated', () => {
    const index = indexOf([
      doc('rare', 'pottery class'),
      doc('common', 'coffee coffee coffee'),
      doc('b', 'coffee shop'),
      doc('c', 'coffee friends'),
      doc('d', 'coffee morning'),
    ]);
    expect(index.search(['coffee', 'pottery'], 2).map((h) => h.id)).toEqual(['rare', 'common']);
  });

  it('breaks score ties by id, whatever the insertion order', () => {
    const forward = indexOf([doc('y', 'tea'), doc('x', 'tea'), doc('z', 'tea')]);
    const backward = indexOf([doc('z', 'tea'), doc('x', 'tea'), doc('y', 'tea')]);
    expect(forward.search(['tea'], 10).map((h) => h.id)).toEqual(['x', 'y', 'z']);
    expect(backward.search(['tea'], 10)).toEqual(forward.search(['tea'], 10));
  });

  it('removal drops the document and changes idf and the other scores', () => {
    const index = indexOf(CORPUS);
    const before = index.search(['coffee'], 10);
    const idfBefore = index.idf('coffee');
    expect(index.remove('a', countsOf(CORPUS[0]!.tokens))).toBe(true);
    expect(index.remove('a', countsOf(CORPUS[0]!.tokens))).toBe(false);
    expect(index.size).toBe(4);
    expect(index.documentFrequency('coffee')).toBe(3);
    expect(index.idf('coffee')).toBeCloseTo(Math.log(1 + (4 - 3 + 0.5) / (3 + 0.5)), 12);
    expect(index.idf('coffee')).not.toBe(idfBefore);
    const after = index.search(['coffee'], 10);
    expect(after.map((h) => h.id)).toEqual(['b', 'c', 'd']);
    expect(after.find((h) => h.id === 'b')?.score).not.toBe(before.find((h) => h.id === 'b')?.score);
    expect(index.search(['morning'], 10)).toEqual([]);
  });

  it('refuses an id indexed already, and takes a document back only with the counts it was added with', () => {
    const index = indexOf(CORPUS);
    expect(() => index.add(doc('e', 'pottery wheel'))).toThrow(RangeError);
    const before = index.search(['run', 'evening', 'park'], 10);
    for (const wrong of ['evening run', 'evening run park park', 'evening walk park', 'evening run park absent']) {
      expect(() => index.remove('e', countsOf(wrong.split(' ')))).toThrow(Bm25CountsMismatch);
    }
    expect(index.search(['run', 'evening', 'park'], 10)).toEqual(before);
    expect(index.remove('e', countsOf(['park', 'run', 'evening']))).toBe(true);
    index.add(doc('e', 'pottery wheel'));
    expect(index.size).toBe(5);
    expect(index.search(['run'], 10)).toEqual([]);
    expect(index.search(['pottery'], 10).map((h) => h.id)).toEqual(['e', 'd']); // shorter doc first
  });

  it('counts a term only in its most recent uses: an older use of a common word adds nothing', () => {
    const docs = [
      doc('old', 'coffee pottery'),
      doc('oldest', 'coffee'),
      doc('mid', 'coffee tea'),
      doc('new1', 'coffee'),
      doc('new2', 'coffee morning'),
    ];
    const index = indexOf(docs, { recentUses: 2 });
    const every = indexOf(docs, { recentUses: Number.POSITIVE_INFINITY });
    // 'coffee' counts in new1 and new2 only; 'old' is found by 'pottery' and scores as if it held nothing else.
    const hits = index.search(['coffee', 'pottery'], 10);
    expect(hits.map((h) => h.id)).toEqual(['old', 'new1', 'new2']);
    expect(hits[0]!.score).toBe(every.search(['pottery'], 1)[0]!.score);
    expect(hits.slice(1)).toEqual(every.search(['coffee'], 10).filter((h) => h.id === 'new1' || h.id === 'new2'));
    // The idf is the term's over every use: it is as common as it is.
    expect(index.idf('coffee')).toBe(every.idf('coffee'));
    // A boosted document (of a month the query names) counts its older uses too.
    index.tag('old', 7);
    const boostedOld = { tags: [7], restMax: 1 };
    const weigh = (id: string): number => (id === 'old' ? 2 : 1);
    expect(index.search(['coffee', 'pottery'], 1, weigh, 2, boostedOld)[0]).toEqual({
      id: 'old',
      score: every.search(['coffee', 'pottery'], 10).find((h) => h.id === 'old')!.score * 2,
    });
    // Removing a recent use lets the next most recent one count.
    expect(index.remove('new2', countsOf(['coffee', 'morning']))).toBe(true);
    expect(index.search(['coffee'], 10).map((h) => h.id)).toEqual(['new1', 'mid']);
    expect(() => new Bm25Index({ recentUses: 0 })).toThrow(RangeError);
  });

  it('honours k, and returns nothing for k ≤ 0 or an empty index', () => {
    const index = indexOf(CORPUS);
    expect(index.search(['coffee'], 2)).toHaveLength(2);
    expect(index.search(['coffee'], 0)).toEqual([]);
    expect(new Bm25Index().search(['coffee'], 5)).toEqual([]);
  });

  it('scales each score by a weight before taking the best k; a weight ≤ 0 leaves the document out', () => {
    const index = indexOf(CORPUS);
    const plain = new Map(index.search(['coffee'], 10).map((h) => [h.id, h.score]));
    const weighted = index.search(['coffee'], 2, (id) => (id === 'd' ? 10 : id === 'a' ? 0 : 1));
    expect(weighted.map((h) => h.id)).toEqual(['d', 'b']);
    expect(weighted[0]!.score).toBeCloseTo(plain.get('d')! * 10, 12);
    expect(index.search(['coffee'], 10, (id) => (id === 'a' ? -1 : 1)).map((h) => h.id)).not.toContain('a');
  });

  it('drops dead entries once they are a quarter of the live ones, and ranks as before', () => {
    const index = new Bm25Index({ compactAtLeast: 10 });
    const words = ['tea', 'cake', 'park', 'dog', 'rain', 'book', 'sun', 'moon'];
    const tokensOf = (i: number, round: number) => [words[i % 8]!, words[(i + round) % 8]!, `w${i}`];
    for (let i = 0; i < 50; i++) index.add({ id: `d${i}`, tokens: tokensOf(i, 0) });
    let most = 0;
    for (let round = 1; round <= 6; round++) {
      for (let i = 0; i < 50; i++) {
        index.remove(`d${i}`, countsOf(tokensOf(i, round - 1)));
        index.add({ id: `d${i}`, tokens: tokensOf(i, round) });
        const { live, stored } = index.postingEntries();
        most = Math.max(most, stored - live);
        expect(stored - live).toBeLessThanOrEqual(Math.max(10, live / 4) + 3);
      }
    }
    expect(most).toBeGreaterThan(10);
    const fresh = indexOf(Array.from({ length: 50 }, (_, i) => ({ id: `d${i}`, tokens: tokensOf(i, 6) })));
    expect(index.search(['tea', 'moon', 'w7'], 20)).toEqual(fresh.search(['tea', 'moon', 'w7'], 20));
  });

  it("hands weigh each document's tag beside its id, through removals, compaction and a restore (where the reader tags again)", () => {
    const index = new Bm25Index({ compactAtLeast: 10 });
    const tagOf = (i: number, round: number) => 1_000 * round + i;
    const tokensOf = (i: number, round: number) => ['tea', `w${i}`, `r${round}`];
    for (let i = 0; i < 40; i++) index.addCounts(`d${i}`, countsOf(tokensOf(i, 0)), tagOf(i, 0));
    for (let round = 1; round <= 3; round++) {
      for (let i = 0; i < 40; i += 2) {
        index.remove(`d${i}`, countsOf(tokensOf(i, round - 1)));
        index.addCounts(`d${i}`, countsOf(tokensOf(i, round)), tagOf(i, round));
      }
    }
    const expected = (id: string) => {
      const i = Number(id.slice(1));
      return tagOf(i, i % 2 === 0 ? 3 : 0);
    };
    const seen = new Map<string, number>();
    const weigh = (id: string, tag: number) => {
      seen.set(id, tag);
      return 1;
    };
    // Without a bound every match is weighed; with one, the pruned search weighs its candidates.
    index.search(['tea'], 40, weigh);
    expect(seen.size).toBe(40);
    for (const [id, tag] of seen) expect(tag, id).toBe(expected(id));
    seen.clear();
    index.search(['tea', 'w3'], 5, weigh, 1);
    expect(seen.size).toBeGreaterThan(0);
    for (const [id, tag] of seen) expect(tag, id).toBe(expected(id));

    const restored = Bm25Index.fromState(index.toState());
    seen.clear();
    restored.search(['tea'], 40, weigh);
    expect([...seen.values()].every((tag) => tag === NO_TAG)).toBe(true);
    for (let i = 0; i < 40; i++) restored.tag(`d${i}`, expected(`d${i}`));
    seen.clear();
    restored.search(['tea'], 40, weigh);
    for (const [id, tag] of seen) expect(tag, id).toBe(expected(id));
  });

  it('takes k1 and b: with b = 0 document length no longer matters', () => {
    const docs = [doc('short', 'kiln'), doc('long', 'kiln glaze clay wheel studio')];
    expect(
      indexOf(docs)
        .search(['kiln'], 2)
        .map((h) => h.id),
    ).toEqual(['short', 'long']);
    const flat = indexOf(docs, { b: 0 }).search(['kiln'], 2);
    expect(flat[0]?.score).toBe(flat[1]?.score);
    expect(() => new Bm25Index({ b: 1.5 })).toThrow(RangeError);
  });

  it('incremental adds and removes rank exactly like an index built from the survivors, dead entries dropped or not', () => {
    const vocabulary = fc.constantFrom('tea', 'cake', 'park', 'dog', 'rain', 'book');
    // Some documents say a word 255 times or more (a frequency a posting keeps aside).
    const tokens = fc.oneof(
      { weight: 4, arbitrary: fc.array(vocabulary, { maxLength: 6 }) },
      {
        weight: 1,
        arbitrary: fc.tuple(vocabulary, fc.constantFrom(254, 255, 300)).map(([word, times]) => Array<string>(times).fill(word)),
      },
    );
    const op = fc.oneof(
      fc.record({ kind: fc.constant('add' as const), id: fc.integer({ min: 0, max: 6 }), tokens }),
      fc.record({ kind: fc.constant('remove' as const), id: fc.integer({ min: 0, max: 6 }) }),
    );
    fc.assert(
      fc.property(
        fc.array(op, { maxLength: 30 }),
        fc.array(vocabulary, { minLength: 1, maxLength: 3 }),
        fc.constantFrom(0, 3, 1_000),
        (ops, query, compactAtLeast) => {
          const index = new Bm25Index({ compactAtLeast });
          const alive = new Map<string, Bm25Document>();
          for (const o of ops) {
            const id = `d${o.id}`;
            // Adding an id again replaces it, as the recall index does.
            const was = alive.get(id);
            if (was) index.remove(id, countsOf(was.tokens));
            alive.delete(id);
            if (o.kind === 'add') {
              index.add({ id, tokens: o.tokens });
              alive.set(id, { id, tokens: o.tokens });
            }
          }
          const fresh = indexOf([...alive.values()].sort((x, y) => (x.id < y.id ? 1 : -1)));
          const got = index.search(query, 10);
          const want = fresh.search(query, 10);
          expect(got.map((h) => h.id)).toEqual(want.map((h) => h.id));
          for (const [i, h] of got.entries()) expect(h.score).toBeCloseTo(want[i]!.score, 9);
          const among = index.searchAmong(
            query,
            [...alive.values()].map((d) => ({ id: d.id, counts: countsOf(d.tokens) })),
            10,
          );
          expect(among.map((h) => h.id)).toEqual(want.map((h) => h.id));
          for (const [i, h] of among.entries()) expect(h.score).toBeCloseTo(want[i]!.score, 9);
          for (const term of ['tea', 'cake', 'park', 'dog', 'rain', 'book']) {
            expect(index.documentFrequency(term)).toBe(fresh.documentFrequency(term));
          }
          expect(index.size).toBe(alive.size);
        },
      ),
      { numRuns: 500 },
    );
  });

  it('scores only the candidates exactly as a search weighed to them would rank them', () => {
    const vocabulary = fc.constantFrom('tea', 'cake', 'park', 'dog', 'rain', 'book');
    fc.assert(
      fc.property(
        fc.array(fc.array(vocabulary, { maxLength: 6 }), { maxLength: 20 }),
        fc.array(fc.boolean(), { minLength: 20, maxLength: 20 }),
        fc.array(vocabulary, { minLength: 1, maxLength: 4 }),
        fc.integer({ min: 1, max: 12 }),
        (documents, chosen, query, k) => {
          const index = indexOf(documents.map((tokens, i) => ({ id: `d${i}`, tokens })));
          const candidates = documents.map((tokens, i) => ({ id: `d${i}`, counts: countsOf(tokens) })).filter((_, i) => chosen[i]);
          const inSet = new Set(candidates.map((c) => c.id));
          const among = index.searchAmong(query, [...candidates, { id: 'not-indexed', counts: countsOf(query) }], k);
          const weighed = index.search(query, k, (id) => (inSet.has(id) ? 1 : 0));
          expect(among).toEqual(weighed);
        },
      ),
    );
  });

  it('with a bound on the weights, ranks exactly as weighing every match does', () => {
    const vocabulary = fc.constantFrom('tea', 'cake', 'park', 'dog', 'rain', 'book', 'sun');
    // Few distinct weights, so ties in weighted score (broken by id) are common.
    const weight = fc.constantFrom(0, 0.5, 1, 1.5, 2, 2.25, 3);
    // Up to 40 documents (size 'max'), so the bound stops the weighing before the last of them.
    fc.assert(
      fc.property(
        fc.array(fc.array(vocabulary, { maxLength: 6 }), { maxLength: 40, size: 'max' }),
        fc.array(weight, { minLength: 40, maxLength: 40 }),
        fc.array(vocabulary, { minLength: 1, maxLength: 4 }),
        fc.integer({ min: 1, max: 12 }),
        fc.boolean(),
        (documents, weights, query, k, reversed) => {
          // Added last first, equal scores meet in an order their ids do not give.
          const docs = documents.map((tokens, i) => ({ id: `d${i}`, tokens }));
          const index = indexOf(reversed ? docs.reverse() : docs);
          const weigh = (id: string): number => weights[Number(id.slice(1))]!;
          const everyMatch = index.search(query, k, weigh);
          expect(index.search(query, k, weigh, 3)).toEqual(everyMatch);
        },
      ),
      { numRuns: 500 },
    );
  });

  it('weighs best first until the bound says no other can reach the k-th, and ranks exactly as a full search', () => {
    const weight = fc.constantFrom(0, 0.5, 1, 1.5, 2, 3);
    fc.assert(
      fc.property(
        COMMON_DOCUMENTS,
        REMOVED,
        COMMON_QUERY,
        fc.array(weight, { minLength: 60, maxLength: 60 }),
        fc.integer({ min: 1, max: 12 }),
        fc.boolean(),
        RECENT,
        (documents, removed, query, weights, k, weighed, recentUses) => {
          const { pruned, full } = prunedAndFull(documents, removed, recentUses);
          const weigh = weighed ? (id: string) => weights[Number(id.slice(1))]! : undefined;
          const bound = weighed ? 3 : undefined;
          expect(pruned.search(query, k, weigh, bound)).toEqual(full.search(query, k, weigh, bound));
        },
      ),
      { numRuns: 1_000 },
    );
  });

  // A restored index uses the arrays of the state in place and copies a posting only when it grows.
  it('restored from its state, and added to after, still prunes to exactly the full ranking', () => {
    fc.assert(
      fc.property(
        COMMON_DOCUMENTS,
        REMOVED,
        COMMON_DOCUMENTS,
        COMMON_QUERY,
        fc.integer({ min: 1, max: 8 }),
        RECENT,
        (documents, removed, later, query, k, recentUses) => {
          const { pruned, full } = prunedAndFull(documents, removed, recentUses);
          const restored = Bm25Index.fromState(pruned.toState(), { compactAtLeast: 2, ...(recentUses ? { recentUses } : {}) });
          expect(restored.search(query, k)).toEqual(full.search(query, k));
          for (const [i, words] of later.entries()) {
            restored.add({ id: `later${i}`, tokens: words });
            full.add({ id: `later${i}`, tokens: words });
          }
          expect(restored.search(query, k)).toEqual(full.search(query, k));
        },
      ),
      { numRuns: 500 },
    );
  });

  it('scores the boosted documents whatever they hold, bounds the rest by their own weight, and ranks exactly as a full search', () => {
    // The rest weigh at most 1.5; a boosted document up to 3 (twice: a month the query names).
    const restWeight = fc.constantFrom(0, 0.5, 1, 1.5);
    fc.assert(
      fc.property(
        COMMON_DOCUMENTS,
        REMOVED,
        COMMON_QUERY,
        fc.array(restWeight, { minLength: 60, maxLength: 60 }),
        fc.uniqueArray(fc.nat(70), { maxLength: 12 }),
        fc.integer({ min: 1, max: 12 }),
        RECENT,
        (documents, removed, query, weights, boostedAt, k, recentUses) => {
          const { pruned, full } = prunedAndFull(documents, removed, recentUses);
          // Boosted tags may name documents removed or never added.
          const boosted = new Set(boostedAt.map((i) => `d${i}`));
          const weigh = (id: string): number => weights[Number(id.slice(1))]! * (boosted.has(id) ? 2 : 1);
          expect(pruned.search(query, k, weigh, 3, { tags: boostedAt, restMax: 1.5 })).toEqual(
            full.search(query, k, weigh, 3, { tags: boostedAt, restMax: 1.5 }),
          );
        },
      ),
      { numRuns: 1_000 },
    );
  });

  it('finds a boosted document by its tag through removals, a tag taken again, retagging and compaction', () => {
    const index = new Bm25Index({ compactAtLeast: 0, recentUses: 1 });
    const full = new Bm25Index({ prune: false, recentUses: 1 });
    for (const bm25 of [index, full]) {
      bm25.addCounts('a', countsOf(['tea', 'cake']), 5);
      bm25.addCounts('b', countsOf(['tea']), 6);
      bm25.addCounts('c', countsOf(['tea']), 7);
      bm25.remove('a', countsOf(['tea', 'cake']));
      // The slot an item left is another's now, and so is its tag.
      bm25.addCounts('d', countsOf(['tea', 'scone']), 5);
      bm25.addCounts('e', countsOf(['tea']), 8);
      bm25.tag('b', 9);
      bm25.remove('c', countsOf(['tea']));
    }
    // Only 'e', the most recent, counts 'tea' unless boosted: boosted, an older use counts too.
    const weigh = (): number => 1;
    for (const [tags, boostedIds] of [
      [[5], ['d']],
      [[9], ['b']],
      [[6], []],
      [[7], []],
      [
        [5, 9, 5],
        ['b', 'd'],
      ],
    ] as const) {
      const hits = index.search(['tea'], 10, weigh, 2, { tags, restMax: 1 });
      expect(hits.map((h) => h.id).sort()).toEqual([...boostedIds, 'e'].sort());
      expect(hits).toEqual(full.search(['tea'], 10, weigh, 2, { tags, restMax: 1 }));
    }
  });

  it('meeting a weight above its bound, ranks exactly as a full search', () => {
    // Up to 4 against a bound of 3 (or the rest's 1.5). With k above the documents none is passed
    // over, so every weight is seen: in a batch, or a boosted document's.
    fc.assert(
      fc.property(
        COMMON_DOCUMENTS,
        REMOVED,
        COMMON_QUERY,
        fc.array(fc.constantFrom(0, 1, 1.5, 4), { minLength: 60, maxLength: 60 }),
        fc.uniqueArray(fc.nat(70), { maxLength: 12 }),
        RECENT,
        (documents, removed, query, weights, boostedAt, recentUses) => {
          const { pruned, full } = prunedAndFull(documents, removed, recentUses);
          const weigh = (id: string): number => weights[Number(id.slice(1))]!;
          expect(pruned.search(query, 61, weigh, 3, { tags: boostedAt, restMax: 1.5 })).toEqual(
            full.search(query, 61, weigh, 3, { tags: boostedAt, restMax: 1.5 }),
          );
        },
      ),
      { numRuns: 1_000 },
    );
  });

  it('with a bound on the weights, still weighs a document that can only tie the k-th and win by id', () => {
    const index = indexOf([doc('d1', 'tea'), doc('d0', 'tea')]);
    expect(index.search(['tea'], 1, () => 2, 2).map((h) => h.id)).toEqual(['d0']);
  });

  it('with a bound on the weights, weighs only what could still rank', () => {
    const index = indexOf(Array.from({ length: 200 }, (_, i) => doc(`d${i}`, i < 5 ? 'rare tea' : 'tea')));
    const weighed: string[] = [];
    const hits = index.search(
      ['rare', 'tea'],
      3,
      (id) => {
        weighed.push(id);
        return 1;
      },
      2,
    );
    expect(hits.map((h) => h.id)).toEqual(['d0', 'd1', 'd2']);
    expect(weighed.length).toBeLessThan(10);
  });

  it('restored from its state, goes on exactly as the index it was taken from', () => {
    const vocabulary = fc.constantFrom('tea', 'cake', 'park', 'dog', 'rain', 'book');
    const tokens = fc.oneof(
      { weight: 4, arbitrary: fc.array(vocabulary, { maxLength: 6 }) },
      { weight: 1, arbitrary: fc.tuple(vocabulary, fc.constantFrom(255, 300)).map(([word, times]) => Array<string>(times).fill(word)) },
    );
    const op = fc.oneof(
      fc.record({ kind: fc.constant('add' as const), id: fc.integer({ min: 0, max: 6 }), tokens }),
      fc.record({ kind: fc.constant('remove' as const), id: fc.integer({ min: 0, max: 6 }) }),
    );
    type Op = { kind: 'add' | 'remove'; id: number; tokens?: string[] };
    const run = (index: Bm25Index, alive: Map<string, string[]>, ops: readonly Op[]) => {
      for (const o of ops) {
        const id = `d${o.id}`;
        const was = alive.get(id);
        if (was) index.remove(id, countsOf(was));
        alive.delete(id);
        if (o.kind === 'add') {
          index.add({ id, tokens: o.tokens! });
          alive.set(id, o.tokens!);
        }
      }
    };
    fc.assert(
      fc.property(
        fc.array(op, { maxLength: 25 }),
        fc.array(op, { maxLength: 25 }),
        fc.array(vocabulary, { minLength: 1, maxLength: 3 }),
        fc.constantFrom(0, 2, 1_000),
        (before, after, query, compactAtLeast) => {
          const original = new Bm25Index({ compactAtLeast });
          const alive = new Map<string, string[]>();
          run(original, alive, before);
          // As a snapshot carries it: through structured cloning, typed arrays and all.
          const restored = Bm25Index.fromState(structuredClone(original.toState()), { compactAtLeast });
          expect(restored.search(query, 10)).toEqual(original.search(query, 10));
          run(original, new Map(alive), after);
          run(restored, alive, after);
          expect(restored.search(query, 10)).toEqual(original.search(query, 10));
          expect(restored.toState()).toEqual(original.toState());
        },
      ),
      { numRuns: 500 },
    );
  });

  it('refuses a state whose arrays do not agree', () => {
    const index = indexOf(CORPUS);
    const state = index.toState();
    expect(() => Bm25Index.fromState({ ...state, postingOffsets: state.postingOffsets.subarray(1) })).toThrow(/term arrays/);
    expect(() => Bm25Index.fromState({ ...state, postingTfs: state.postingTfs.subarray(1) })).toThrow(/term arrays/);
    expect(() => Bm25Index.fromState({ ...state, lengths: state.lengths.subarray(1) })).toThrow(/document arrays/);
    expect(() => Bm25Index.fromState({ ...state, digests: state.digests.subarray(1) })).toThrow(/document arrays/);
    expect(() => Bm25Index.fromState({ ...state, postingSlots: state.postingSlots.map(() => 0) })).toThrow(/ascending documents/);
    expect(() => Bm25Index.fromState({ ...state, terms: state.terms.map(() => 'same') })).toThrow(/listed twice/);
    expect(() => Bm25Index.fromState({ ...state, ids: state.ids.map(() => 'same') })).toThrow(/listed twice/);
  });
});
