/**
 * An incremental Okapi BM25 index held in memory. Pure: no I/O, no clock, and the same
 * sequence of add/remove calls gives the same rankings; ties are broken by id so results
 * never depend on insertion order. One data structure in one file (longer than most): the
 * postings, the documents, their snapshot and the searches share invariants (postings ascend by
 * document and hold dead entries until compaction; frequencies take a byte, larger ones kept
 * aside) that a split would have every part reach into the others' arrays to keep.
 */

import { type Bm25Counts, Bm25CountsMismatch, countsOf, digestOf } from './bm25Counts.ts';
import { type Bm25Hit, byScoreThenId, insertHit, type Weigh, weighedBestFirst } from './rankedHits.ts';

export { type Bm25Counts, Bm25CountsMismatch, countsOf } from './bm25Counts.ts';
export type { Bm25Hit } from './rankedHits.ts';

export type Bm25Document = Readonly<{ id: string; tokens: readonly string[] }>;
/**
 * `compactAtLeast`: dead entries are dropped once there are more than this and a quarter of the
 * live ones (default 1,024). `prune: false` makes every search score every document that
 * matches (the reference the pruned search is tested against);
 * `recentUses`: in how many of its uses, the most recent, a term counts (default RECENT_USES; see
 * `search`).
 */
export type Bm25Options = Readonly<{
  k1?: number;
  b?: number;
  compactAtLeast?: number;
  prune?: boolean;
  recentUses?: number;
}>;

export const DEFAULT_BM25 = { k1: 1.2, b: 0.75 } as const;

/**
 * Everything an index holds, as plain data and a few typed arrays: what a snapshot keeps
 * (`Bm25Index.fromState`). Terms in code-unit order, each posting (the slots of the documents
 * holding it, ascending, and their term frequencies) from its offset to the next one's;
 * documents in the order they were added, each with its length and the digest of its counts.
 */
export type Bm25State = Readonly<{
  k1: number;
  b: number;
  terms: readonly string[];
  postingOffsets: Int32Array;
  postingSlots: Int32Array;
  postingTfs: Int32Array;
  ids: readonly string[];
  lengths: Float64Array;
  digests: Int32Array;
  totalLength: number;
}>;

export class Bm25Index {
  readonly k1: number;
  readonly b: number;
  private readonly compactAtLeast: number;
  private readonly prune: boolean;
  private readonly recentUses: number;
  /**
   * Postings in compact arrays, appended to in the order documents are added (so each lists its
   * slots ascending): term → its id; per term id, the slots of the documents holding it and
   * their term frequencies, the first `used` entries of each array written, `df` of them live.
   * A removal only marks its slot dead and lowers the frequencies of the terms it is given; the
   * dead entries are dropped in one pass once they are a quarter of all (see `compact`).
   */
  private readonly termIds = new Map<string, number>();
  private readonly terms: (string | undefined)[] = [];
  private readonly freeTermIds: number[] = [];
  private readonly postingSlots: Int32Array[] = [];
  /**
   * Term frequencies in a byte each; LARGE_TF says the frequency is in `largeTfs`, by
   * `largeTfKey(termId, slot)` (the keys of dead documents go at the next compaction: slots are
   * not used again before it, so a term id used again never meets an old key).
   */
  private readonly postingTfs: Uint8Array[] = [];
  private largeTfs = new Map<number, number>();
  private readonly used: number[] = [];
  private readonly df: number[] = [];
  /** doc id → its slot; per slot its id (undefined once removed), length and the digest of its counts. */
  private readonly slots = new Map<string, number>();
  private ids: (string | undefined)[] = [];
  /** Per slot, the number its adder tagged the document with (-1: none): what `weigh` is handed beside the id, to look the document up by. */
  private tags: number[] = [];
  /** Per tag, the slot of the live document tagged with it (-1: none): how boosted documents, named by tag, are found with no map. */
  private slotOfTag = new Int32Array(0);
  /** Per slot its length in tokens (the first `ids.length` entries written); a typed array keeps a search's reads of it close together. */
  private lengths = new Uint32Array(INITIAL_DOCUMENTS);
  private digests: number[] = [];
  private liveEntries = 0;
  private deadEntries = 0;
  /** A score per slot during a search (zero again after it). */
  private scores = new Float64Array(0);
  private totalLength = 0;

  constructor(options: Bm25Options = {}) {
    this.k1 = options.k1 ?? DEFAULT_BM25.k1;
    this.b = options.b ?? DEFAULT_BM25.b;
    this.compactAtLeast = options.compactAtLeast ?? COMPACT_AT_LEAST;
    this.prune = options.prune ?? true;
    this.recentUses = options.recentUses ?? RECENT_USES;
    if (!(this.recentUses >= 1)) throw new RangeError(`BM25 needs recentUses ≥ 1, got ${this.recentUses}`);
    if (!(this.k1 >= 0) || !(this.b >= 0 && this.b <= 1)) {
      throw new RangeError(`BM25 needs k1 ≥ 0 and 0 ≤ b ≤ 1, got k1=${this.k1}, b=${this.b}`);
    }
  }

  get size(): number {
    return this.slots.size;
  }

  /** The index as data, for a snapshot: the live documents and terms only, the same for two indexes that rank alike. */
  toState(): Bm25State {
    const newSlot = new Int32Array(this.ids.length).fill(-1);
    const ids: string[] = [];
    const lengths: number[] = [];
    const digests: number[] = [];
    for (const [slot, id] of this.ids.entries()) {
      if (id === undefined) continue;
      newSlot[slot] = ids.length;
      ids.push(id);
      lengths.push(this.lengths[slot]!);
      digests.push(this.digests[slot]!);
    }
    const terms = [...this.termIds.keys()].sort((x, y) => (x < y ? -1 : x > y ? 1 : 0));
    const postingOffsets = new Int32Array(terms.length + 1);
    for (const [i, term] of terms.entries()) postingOffsets[i + 1] = postingOffsets[i]! + this.df[this.termIds.get(term)!]!;
    const postingSlots = new Int32Array(postingOffsets[terms.length]!);
    const postingTfs = new Int32Array(postingSlots.length);
    for (const [i, term] of terms.entries()) {
      const termId = this.termIds.get(term)!;
      const slots = this.postingSlots[termId]!;
      const tfs = this.postingTfs[termId]!;
      let at = postingOffsets[i]!;
      for (let e = 0, n = this.used[termId]!; e < n; e++) {
        const moved = newSlot[slots[e]!]!;
        if (moved < 0) continue;
        postingSlots[at] = moved;
        postingTfs[at] = this.tfAt(termId, slots[e]!, tfs[e]!);
        at++;
      }
    }
    return {
      k1: this.k1,
      b: this.b,
      terms,
      postingOffsets,
      postingSlots,
      postingTfs,
      ids,
      lengths: Float64Array.from(lengths),
      digests: Int32Array.from(digests),
      totalLength: this.totalLength,
    };
  }

  /**
   * The index `toState` described; the same add and remove calls after it rank as they would
   * have on the original. Its arrays are used in place (a posting that grows is copied then).
   */
  static fromState(state: Bm25State, options: Omit<Bm25Options, 'k1' | 'b'> = {}): Bm25Index {
    const index = new Bm25Index({ k1: state.k1, b: state.b, ...options });
    const terms = state.terms.length;
    const documents = state.ids.length;
    const offsets = state.postingOffsets;
    const ascending =
      offsets.length === terms + 1 &&
      offsets[0] === 0 &&
      offsets[terms] === state.postingSlots.length &&
      offsets.every((o, i) => i === 0 || o > offsets[i - 1]!);
    if (state.postingSlots.length !== state.postingTfs.length || !ascending) {
      throw new RangeError('Bm25Index.fromState: the term arrays do not agree');
    }
    if (state.lengths.length !== documents || state.digests.length !== documents) {
      throw new RangeError('Bm25Index.fromState: the document arrays do not agree');
    }
    for (let t = 0; t < terms; t++) {
      const from = offsets[t]!;
      const to = offsets[t + 1]!;
      const slots = state.postingSlots.subarray(from, to);
      if (slots.some((slot, i) => slot < 0 || slot >= documents || (i > 0 && slot <= slots[i - 1]!))) {
        throw new RangeError(`Bm25Index.fromState: the posting of ${JSON.stringify(state.terms[t])} is not of ascending documents`);
      }
      index.termIds.set(state.terms[t]!, t);
      index.terms[t] = state.terms[t];
      index.postingSlots[t] = slots;
      const tfs = state.postingTfs.subarray(from, to);
      if (tfs.some((tf) => tf < 1))
        throw new RangeError(`Bm25Index.fromState: the posting of ${JSON.stringify(state.terms[t])} counts a term less than once`);
      index.postingTfs[t] = Uint8Array.from(tfs, (tf, i) => index.smallTf(t, slots[i]!, tf));
      index.used[t] = to - from;
      index.df[t] = to - from;
    }
    if (index.termIds.size !== terms) throw new RangeError('Bm25Index.fromState: a term is listed twice');
    for (const [slot, id] of state.ids.entries()) index.slots.set(id, slot);
    if (index.slots.size !== documents) throw new RangeError('Bm25Index.fromState: a document is listed twice');
    index.ids = [...state.ids];
    index.tags = new Array<number>(documents).fill(NO_TAG);
    index.lengths = Uint32Array.from(state.lengths);
    index.digests = Array.from(state.digests);
    index.liveEntries = state.postingSlots.length;
    index.totalLength = state.totalLength;
    return index;
  }

  has(id: string): boolean {
    return this.slots.has(id);
  }

  /** Tags the document `id` (see `addCounts`): a snapshot holds no tags, its reader gives them again. */
  tag(id: string, tag: number): void {
    const slot = this.slots.get(id);
    if (slot === undefined) return;
    this.untag(slot);
    this.tags[slot] = tag;
    this.tagged(slot);
  }

  /** Records that the document in `slot` carries its tag (the tags of live documents are distinct, as item slots are). */
  private tagged(slot: number): void {
    const tag = this.tags[slot]!;
    if (tag < 0) return;
    if (tag >= this.slotOfTag.length) {
      const grown = new Int32Array(Math.max(INITIAL_DOCUMENTS, Math.ceil((tag + 1) * GROWTH))).fill(-1);
      grown.set(this.slotOfTag);
      this.slotOfTag = grown;
    }
    this.slotOfTag[tag] = slot;
  }

  /** The document in `slot` no longer answers to its tag. */
  private untag(slot: number): void {
    const tag = this.tags[slot]!;
    if (tag >= 0 && this.slotOfTag[tag] === slot) this.slotOfTag[tag] = -1;
  }

  /** Whether `id` is indexed with these counts (by their sum and digest). */
  holds(id: string, counts: Bm25Counts): boolean {
    const slot = this.slots.get(id);
    if (slot === undefined) return false;
    let length = 0;
    for (const [term, count] of counts) length += this.termIds.has(term) ? count : Number.NaN;
    return length === this.lengths[slot] && digestOf(counts) === this.digests[slot];
  }

  /** Adds a document given as its tokens. @throws RangeError when the id is indexed already. */
  add(doc: Bm25Document): void {
    this.addCounts(doc.id, countsOf(doc.tokens));
  }

  /**
   * Adds a document given as how many times each term occurs in it, tagged `tag` (a whole number
   * `weigh` is handed beside its id). @throws RangeError when the id is indexed already.
   */
  addCounts(id: string, counts: Bm25Counts, tag = NO_TAG): void {
    if (this.slots.has(id)) throw new RangeError(`Bm25Index: ${id} is indexed already; remove it first`);
    const slot = this.ids.length;
    let length = 0;
    for (const [term, count] of counts) {
      if (!(Number.isInteger(count) && count >= 1)) throw new RangeError(`Bm25Index: ${id} counts ${term} ${count} times`);
      const termId = this.termIdOf(term);
      const at = this.used[termId]!;
      if (at === this.postingSlots[termId]!.length) this.growPosting(termId);
      this.postingSlots[termId]![at] = slot;
      this.postingTfs[termId]![at] = this.smallTf(termId, slot, count);
      this.used[termId] = at + 1;
      this.df[termId]! += 1;
      length += count;
    }
    this.liveEntries += counts.size;
    this.slots.set(id, slot);
    if (slot === this.lengths.length) {
      const grown = new Uint32Array(Math.ceil(slot * GROWTH) + INITIAL_DOCUMENTS);
      grown.set(this.lengths);
      this.lengths = grown;
    }
    this.ids.push(id);
    this.tags.push(tag);
    this.tagged(slot);
    this.lengths[slot] = length;
    this.digests.push(digestOf(counts));
    this.totalLength += length;
  }

  /**
   * Removes a document, given the counts it was added with (the index keeps no copy of them).
   * @returns false when the id was not indexed. @throws Bm25CountsMismatch when the counts are not those.
   */
  remove(id: string, counts: Bm25Counts): boolean {
    const slot = this.slots.get(id);
    if (slot === undefined) return false;
    if (!this.holds(id, counts))
      throw new Bm25CountsMismatch(`Bm25Index.remove: the counts given for ${id} are not those it was added with`);
    const length = this.lengths[slot]!;
    for (const term of counts.keys()) {
      const termId = this.termIds.get(term)!;
      const df = this.df[termId]! - 1;
      this.df[termId] = df;
      this.liveEntries -= 1;
      if (df > 0) this.deadEntries += 1;
      else this.freeTerm(termId);
    }
    this.slots.delete(id);
    this.ids[slot] = undefined;
    this.untag(slot);
    this.totalLength -= length;
    if (this.deadEntries > this.compactAtLeast && this.deadEntries * 4 > this.liveEntries) this.compact();
    return true;
  }

  private termIdOf(term: string): number {
    let termId = this.termIds.get(term);
    if (termId === undefined) {
      termId = this.freeTermIds.pop() ?? this.terms.length;
      this.termIds.set(term, termId);
      this.terms[termId] = term;
      this.postingSlots[termId] = new Int32Array(INITIAL_POSTING);
      this.postingTfs[termId] = new Uint8Array(INITIAL_POSTING);
      this.used[termId] = 0;
      this.df[termId] = 0;
    }
    return termId;
  }

  /** A term no live document holds any more: its posting (all dead entries) goes, and its id is free. */
  private freeTerm(termId: number): void {
    this.deadEntries -= this.used[termId]! - 1;
    this.termIds.delete(this.terms[termId]!);
    this.terms[termId] = undefined;
    this.postingSlots[termId] = EMPTY;
    this.postingTfs[termId] = NO_TFS;
    this.used[termId] = 0;
    this.freeTermIds.push(termId);
  }

  private growPosting(termId: number): void {
    const size = Math.max(INITIAL_POSTING, Math.ceil(this.postingSlots[termId]!.length * GROWTH));
    const slots = new Int32Array(size);
    slots.set(this.postingSlots[termId]!);
    const tfs = new Uint8Array(size);
    tfs.set(this.postingTfs[termId]!);
    this.postingSlots[termId] = slots;
    this.postingTfs[termId] = tfs;
  }

  /**
   * Drops the dead entries: live documents take slots 0, 1, … in the order they had, so each
   * posting stays ascending; postings much larger than they need are made smaller.
   */
  private compact(): void {
    const newSlot = new Int32Array(this.ids.length).fill(-1);
    const ids: (string | undefined)[] = [];
    const tags: number[] = [];
    const lengths: number[] = [];
    const digests: number[] = [];
    for (const [slot, id] of this.ids.entries()) {
      if (id === undefined) continue;
      newSlot[slot] = ids.length;
      this.slots.set(id, ids.length);
      ids.push(id);
      tags.push(this.tags[slot]!);
      lengths.push(this.lengths[slot]!);
      digests.push(this.digests[slot]!);
    }
    for (const termId of this.termIds.values()) {
      let slots = this.postingSlots[termId]!;
      let tfs = this.postingTfs[termId]!;
      let live = 0;
      for (let e = 0, n = this.used[termId]!; e < n; e++) {
        const moved = newSlot[slots[e]!]!;
        if (moved < 0) continue;
        slots[live] = moved;
        tfs[live] = tfs[e]!;
        live++;
      }
      if (slots.length > Math.max(INITIAL_POSTING, live * 2)) {
        const size = Math.max(INITIAL_POSTING, Math.ceil(live * GROWTH));
        slots = slots.slice(0, size);
        tfs = tfs.slice(0, size);
      }
      this.postingSlots[termId] = slots;
      this.postingTfs[termId] = tfs;
      this.used[termId] = live;
    }
    const largeTfs = new Map<number, number>();
    for (const [key, tf] of this.largeTfs) {
      const moved = newSlot[key % SLOT_SPAN]!;
      if (moved >= 0) largeTfs.set(largeTfKey(Math.floor(key / SLOT_SPAN), moved), tf);
    }
    this.largeTfs = largeTfs;
    this.ids = ids;
    this.tags = tags;
    this.slotOfTag.fill(-1);
    for (let slot = 0; slot < ids.length; slot++) this.tagged(slot);
    this.lengths = Uint32Array.from(lengths);
    this.digests = digests;
    this.deadEntries = 0;
  }

  /** What a posting stores for a term frequency: itself when it fits in a byte below LARGE_TF, else LARGE_TF (kept aside). */
  private smallTf(termId: number, slot: number, tf: number): number {
    if (tf < LARGE_TF) return tf;
    this.largeTfs.set(largeTfKey(termId, slot), tf);
    return LARGE_TF;
  }

  /** The term frequency a posting entry stands for. */
  private tfAt(termId: number, slot: number, stored: number): number {
    return stored === LARGE_TF ? this.largeTfs.get(largeTfKey(termId, slot))! : stored;
  }

  /** Posting entries of live documents, and all the postings hold (dead ones not yet dropped): counted, for tests and benchmarks. */
  postingEntries(): Readonly<{ live: number; stored: number }> {
    let live = 0;
    let stored = 0;
    for (const termId of this.termIds.values()) {
      live += this.df[termId]!;
      stored += this.used[termId]!;
    }
    return { live, stored };
  }

  /** Number of indexed documents containing `term`. */
  documentFrequency(term: string): number {
    const termId = this.termIds.get(term);
    return termId === undefined ? 0 : this.df[termId]!;
  }

  /** ln(1 + (N − df + 0.5) / (df + 0.5)): always positive, largest for rare terms. */
  idf(term: string): number {
    const n = this.slots.size;
    const df = this.documentFrequency(term);
    return Math.log(1 + (n - df + 0.5) / (df + 0.5));
  }

  /**
   * The `k` best documents for the query, by score descending then id ascending. A term
   * repeated in the query counts once per repetition; documents matching no term are absent.
   * `weigh` scales each matching document's score before ranking; a weight ≤ 0 leaves it out.
   * `maxWeight`, a bound on what `weigh` returns, lets the search pass over documents that could
   * not reach the k-th best even weighing that much, and weigh the rest best score first (see
   * `searchRecent`); the ranking is the same as without it. The bound must hold; a weight seen
   * above it makes the search weigh every document after all. `boosted` names the few documents
   * that may weigh more than the rest (those of a month the query names), so the bound on the
   * rest can be theirs.
   *
   * A term counts only in its `recentUses` most recent uses (in every use, for a term used no
   * more often): an older use of a common word adds nothing to a document's score, as if it were
   * not there, except in a boosted document, which counts all it holds. So a search reads at
   * most that many entries of each term, and its cost stops growing with what was said once its
   * words are that common; what a rarer word says, and every search of a memory no larger than
   * that, is exact BM25.
   *
   * @example index.search(tokenize('where is the hotpot place'), 10)
   */
  search(queryTokens: readonly string[], k: number, weigh?: Weigh, maxWeight?: number, boosted?: BoostedDocuments): Bm25Hit[] {
    if (k <= 0 || this.slots.size === 0) return [];
    const avgLength = this.totalLength / this.slots.size || 1;
    const terms = this.queryTerms(queryTokens);
    if (this.prune && (!weigh || maxWeight !== undefined)) {
      const found = this.searchRecent(terms, k, avgLength, weigh, maxWeight, boosted);
      if (found) return found;
    }
    this.makeRoomToScore();
    const { scores } = this;
    const touched: number[] = [];
    const { ids } = this;
    // A boosted document (of a month the query names) counts every use of the query's terms it holds.
    const boostedSlots = new Set(this.boostedSlots(weigh ? boosted : undefined));
    for (const term of terms) {
      const { termId } = term;
      const slots = this.postingSlots[termId]!;
      const tfs = this.postingTfs[termId]!;
      const recent = this.recentFrom(termId);
      for (let at = 0, n = this.used[termId]!; at < n; at++) {
        const slot = slots[at]!;
        if (ids[slot] === undefined || (at < recent && !boostedSlots.has(slot))) continue;
        if (scores[slot] === 0) touched.push(slot);
        scores[slot]! += this.partOf(term, slot, this.tfAt(termId, slot, tfs[at]!), avgLength);
      }
    }
    const hits: Bm25Hit[] = [];
    for (const slot of touched) {
      const weight = weigh ? weigh(ids[slot]!, this.tags[slot]!) : 1;
      if (weight > 0) hits.push({ id: ids[slot]!, score: scores[slot]! * weight });
      scores[slot] = 0;
    }
    hits.sort(byScoreThenId);
    return hits.slice(0, k);
  }

  /**
   * The terms' recent uses added up a term at a time, each posting read once in order, then the
   * documents weighed best first until even the most a weight can multiply by could not lift the
   * next to the k-th. A boosted document (of a month the query names) counts every use of the
   * query's terms it holds: it is scored apart (its terms looked up in their whole postings, in
   * ascending order) and weighed first. Scores are summed in the query's term order, as the full
   * search sums them, so the ranking is the same numbers in the same order. Undefined when a
   * weight exceeds its bound.
   */
  private searchRecent(
    terms: readonly QueryTerm[],
    k: number,
    avgLength: number,
    weigh: Weigh | undefined,
    maxWeight: number | undefined,
    boosted: BoostedDocuments | undefined,
  ): Bm25Hit[] | undefined {
    const { ids, tags, k1, b, lengths } = this;
    this.makeRoomToScore();
    const scores = this.scores;
    const touched: number[] = [];
    for (const term of terms) {
      const { termId } = term;
      const slots = this.postingSlots[termId]!;
      const tfs = this.postingTfs[termId]!;
      // partOf's operations, in its order, with what is the same for every entry taken out of the loop.
      const timesIdf = term.times * term.idf;
      for (let at = this.recentFrom(termId), used = this.used[termId]!; at < used; at++) {
        const slot = slots[at]!;
        if (ids[slot] === undefined) continue;
        const stored = tfs[at]!;
        const tf = stored === LARGE_TF ? this.tfAt(termId, slot, stored) : stored;
        if (scores[slot] === 0) touched.push(slot);
        scores[slot]! += timesIdf * ((tf * (k1 + 1)) / (tf + k1 * (1 - b + (b * lengths[slot]!) / avgLength)));
      }
    }
    const done = (best: Bm25Hit[] | undefined): Bm25Hit[] | undefined => {
      for (const slot of touched) scores[slot] = 0;
      return best;
    };
    const top: Bm25Hit[] = [];
    const boostedInOrder = this.boostedSlots(weigh ? boosted : undefined);
    // Each term's posting is looked up from where the last boosted document was: they come in ascending order.
    const look = new Int32Array(terms.length);
    for (const slot of boostedInOrder) {
      if (ids[slot] === undefined) continue;
      let score = 0;
      for (const [q, term] of terms.entries()) {
        const slots = this.postingSlots[term.termId]!;
        const used = this.used[term.termId]!;
        const at = seek(slots, look[q]!, used, slot);
        look[q] = at;
        if (at < used && slots[at] === slot) score += this.partAt(term, at, avgLength);
      }
      if (score === 0) continue;
      const id = ids[slot]!;
      const weight = weigh!(id, tags[slot]!);
      if (weight > maxWeight!) return done(undefined);
      if (weight > 0) insertHit(top, { id, score: score * weight }, k);
    }
    const scoredApart = boostedInOrder.length > 0 ? new Set(boostedInOrder) : undefined;
    const rest = scoredApart ? touched.filter((slot) => !scoredApart.has(slot)) : touched;
    const restMost = weigh ? (boosted?.restMax ?? maxWeight!) : 1;
    return done(weighedBestFirst(rest, scores, ids, tags, k, weigh ?? ONE, restMost, top));
  }

  /** Scores for every slot, zeroed: kept from one search to the next. */
  private makeRoomToScore(): void {
    if (this.scores.length < this.ids.length) this.scores = new Float64Array(Math.max(64, this.ids.length * 2));
  }

  /** Where in its posting the term's `recentUses` most recent live uses begin: 0 when it has no more than those. */
  private recentFrom(termId: number): number {
    if (this.df[termId]! <= this.recentUses) return 0;
    // Every entry live (none of a removed document since compaction): its last entries are its most recent uses.
    if (this.used[termId] === this.df[termId]) return this.used[termId]! - this.recentUses;
    const slots = this.postingSlots[termId]!;
    const { ids } = this;
    let live = 0;
    for (let at = this.used[termId]! - 1; at > 0; at--) {
      if (ids[slots[at]!] !== undefined && ++live === this.recentUses) return at;
    }
    return 0;
  }

  /** The live slots of the boosted documents, ascending, each once. */
  private boostedSlots(boosted: BoostedDocuments | undefined): Int32Array {
    const slots: number[] = [];
    for (const tag of boosted?.tags ?? []) {
      const slot = tag >= 0 && tag < this.slotOfTag.length ? this.slotOfTag[tag]! : -1;
      if (slot >= 0) slots.push(slot);
    }
    const sorted = Int32Array.from(slots).sort();
    let kept = 0;
    for (let i = 0; i < sorted.length; i++) if (i === 0 || sorted[i] !== sorted[i - 1]) sorted[kept++] = sorted[i]!;
    return sorted.subarray(0, kept);
  }

  /** What `term` adds to the score of the document at entry `at` of its posting. */
  private partAt(term: QueryTerm, at: number, avgLength: number): number {
    const slot = this.postingSlots[term.termId]![at]!;
    return this.partOf(term, slot, this.tfAt(term.termId, slot, this.postingTfs[term.termId]![at]!), avgLength);
  }

  /** What `term` adds to the score of the document in `slot`, which holds it `tf` times (Okapi BM25). */
  private partOf(term: QueryTerm, slot: number, tf: number, avgLength: number): number {
    const { k1, b } = this;
    return term.times * term.idf * ((tf * (k1 + 1)) / (tf + k1 * (1 - b + (b * this.lengths[slot]!) / avgLength)));
  }

  /**
   * The same ranking as `search` weighed 1 for `docs` and 0 for every other document, computed
   * from the counts each was added with (the caller keeps them), so its cost is that of the
   * candidates, not of every document sharing a word with the query. Documents not indexed are
   * passed over.
   */
  searchAmong(queryTokens: readonly string[], docs: Iterable<Readonly<{ id: string; counts: Bm25Counts }>>, k: number): Bm25Hit[] {
    if (k <= 0 || this.slots.size === 0) return [];
    const avgLength = this.totalLength / this.slots.size || 1;
    const terms = this.queryTerms(queryTokens);
    const hits: Bm25Hit[] = [];
    for (const { id, counts } of docs) {
      const slot = this.slots.get(id);
      if (slot === undefined) continue;
      // Summed in the query's term order from 0, as `search` sums them, so the scores are the same numbers.
      let score = 0;
      let matched = false;
      for (const term of terms) {
        const tf = counts.get(term.term) ?? 0;
        if (tf === 0) continue;
        matched = true;
        score += this.partOf(term, slot, tf, avgLength);
      }
      if (matched) hits.push({ id, score });
    }
    hits.sort(byScoreThenId);
    return hits.slice(0, k);
  }

  /** The query's indexed terms in the order they first occur, with how many times each occurs and its idf. */
  private queryTerms(queryTokens: readonly string[]): QueryTerm[] {
    const terms: QueryTerm[] = [];
    for (const [term, times] of countsOf(queryTokens)) {
      const termId = this.termIds.get(term);
      if (termId !== undefined) terms.push({ term, termId, times, idf: this.idf(term) });
    }
    return terms;
  }
}

/** A term of a query: its id, how many times the query says it, and its idf. */
type QueryTerm = Readonly<{ term: string; termId: number; times: number; idf: number }>;

/**
 * Where `slot` is in the ascending `slots[from, used)`, or where it would go: the first place
 * holding it or more (`used` when none does). Gallops, then halves, so a posting many times
 * longer than the documents looked up in it is not read through.
 */
const seek = (slots: Int32Array, from: number, used: number, slot: number): number => {
  let lo = from;
  let step = 1;
  while (lo + step < used && slots[lo + step]! < slot) {
    lo += step;
    step *= 2;
  }
  if (slots[lo]! >= slot || lo >= used) return Math.min(lo, used);
  let hi = Math.min(lo + step, used);
  while (lo + 1 < hi) {
    const mid = (lo + hi) >> 1;
    if (slots[mid]! < slot) lo = mid;
    else hi = mid;
  }
  return hi;
};

/** Documents that may weigh more than the others, by their tags: every document not among them weighs at most `restMax`. */
export type BoostedDocuments = Readonly<{ tags: Iterable<number>; restMax: number }>;

/**
 * In how many of its uses, the most recent, a term counts by default. A single LoCoMo conversation
 * has a few words used more often (up to about 600 times). Leave-one-out recall@10 held out:
 * 0.8063 with this, 0.8058 with 512, 0.7843 with 128, 0.8073 counting every use.
 */
const RECENT_USES = 256;
/** The tag of a document added without one. */
export const NO_TAG = -1;

const ONE = (): number => 1;

const INITIAL_POSTING = 4;
const INITIAL_DOCUMENTS = 64;
/** How much a full posting grows by: less room left unused than doubling, a few more copies. */
const GROWTH = 1.5;
/** Dead entries are dropped when there are more than this and more than a quarter of the live ones. */
const COMPACT_AT_LEAST = 1024;
const EMPTY = new Int32Array(0);
const NO_TFS = new Uint8Array(0);
/** A term frequency of this or more is kept out of its posting's bytes. */
const LARGE_TF = 255;
/** Slots are below this (2^31): a (term, slot) key is termId × SLOT_SPAN + slot, exact as a double. */
const SLOT_SPAN = 2 ** 31;
const largeTfKey = (termId: number, slot: number): number => termId * SLOT_SPAN + slot;
