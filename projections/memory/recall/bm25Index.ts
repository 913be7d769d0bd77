/**
 * An incremental Okapi BM25 index held in memory. Pure: no I/O, no clock, and the same
 * sequence of add/remove calls gives the same rankings; ties are broken by id so results
 * never depend on insertion order.
 */

export type Bm25Document = Readonly<{ id: string; tokens: readonly string[] }>;
export type Bm25Hit = Readonly<{ id: string; score: number }>;
export type Bm25Options = Readonly<{ k1?: number; b?: number }>;

export const DEFAULT_BM25 = { k1: 1.2, b: 0.75 } as const;

/**
 * Everything an index holds, as plain data and a few typed arrays: what a snapshot keeps
 * (`Bm25Index.fromState`). Postings and placements are concatenated, each term's (or slot's)
 * entries from its offset to the next one's.
 */
export type Bm25State = Readonly<{
  k1: number;
  b: number;
  /** Per term id, its term (null for a freed id); its posting's slots and frequencies. */
  terms: readonly (string | null)[];
  postingOffsets: Int32Array;
  postingSlots: Int32Array;
  postingTfs: Int32Array;
  freeTermIds: readonly number[];
  /** Per slot, its document (null for a freed slot), length and placement. */
  ids: readonly (string | null)[];
  lengths: Float64Array;
  placementOffsets: Int32Array;
  placements: Int32Array;
  freeSlots: readonly number[];
  totalLength: number;
}>;

export class Bm25Index {
  readonly k1: number;
  readonly b: number;
  /**
   * Postings in compact arrays: term → its id; per term id, the slots of the documents holding
   * it and their term frequencies, the first `df` entries of each array live. A removal moves a
   * posting's last entry into the hole, so it costs the document's terms, not their postings.
   */
  private readonly termIds = new Map<string, number>();
  private readonly terms: (string | undefined)[] = [];
  private readonly freeTermIds: number[] = [];
  private readonly postingSlots: Int32Array[] = [];
  private readonly postingTfs: Int32Array[] = [];
  private readonly df: number[] = [];
  /** doc id → its slot; per slot its id, length, and its term ids followed by where each sits in that term's posting. */
  private readonly slots = new Map<string, number>();
  private readonly ids: (string | undefined)[] = [];
  private readonly lengths: number[] = [];
  private readonly placements: (Int32Array | undefined)[] = [];
  private readonly freeSlots: number[] = [];
  private scores = new Float64Array(0);
  private totalLength = 0;

  constructor(options: Bm25Options = {}) {
    this.k1 = options.k1 ?? DEFAULT_BM25.k1;
    this.b = options.b ?? DEFAULT_BM25.b;
    if (!(this.k1 >= 0) || !(this.b >= 0 && this.b <= 1)) {
      throw new RangeError(`BM25 needs k1 ≥ 0 and 0 ≤ b ≤ 1, got k1=${this.k1}, b=${this.b}`);
    }
  }

  get size(): number {
    return this.slots.size;
  }

  /** The index as data, for a snapshot. */
  toState(): Bm25State {
    const concatenated = (parts: readonly Int32Array[]): { offsets: Int32Array; all: Int32Array } => {
      const offsets = new Int32Array(parts.length + 1);
      for (const [i, part] of parts.entries()) offsets[i + 1] = offsets[i]! + part.length;
      const all = new Int32Array(offsets[parts.length]!);
      for (const [i, part] of parts.entries()) all.set(part, offsets[i]!);
      return { offsets, all };
    };
    const slots = concatenated(this.postingSlots.map((p, t) => p.subarray(0, this.df[t]!)));
    const tfs = concatenated(this.postingTfs.map((p, t) => p.subarray(0, this.df[t]!)));
    const placements = concatenated(this.placements.map((p) => p ?? EMPTY));
    return {
      k1: this.k1,
      b: this.b,
      terms: this.terms.map((t) => t ?? null),
      postingOffsets: slots.offsets,
      postingSlots: slots.all,
      postingTfs: tfs.all,
      freeTermIds: [...this.freeTermIds],
      ids: this.ids.map((id) => id ?? null),
      lengths: Float64Array.from(this.lengths),
      placementOffsets: placements.offsets,
      placements: placements.all,
      freeSlots: [...this.freeSlots],
      totalLength: this.totalLength,
    };
  }

  /**
   * The index `toState` described; the same add and remove calls after it rank as they would
   * have on the original. Its arrays are used in place (a posting that grows is copied then).
   */
  static fromState(state: Bm25State): Bm25Index {
    const index = new Bm25Index({ k1: state.k1, b: state.b });
    const terms = state.terms.length;
    const slots = state.ids.length;
    const ends = (offsets: Int32Array, count: number, total: number): boolean =>
      offsets.length === count + 1 &&
      offsets[0] === 0 &&
      offsets[count] === total &&
      offsets.every((o, i) => i === 0 || o >= offsets[i - 1]!);
    if (state.postingSlots.length !== state.postingTfs.length || !ends(state.postingOffsets, terms, state.postingSlots.length)) {
      throw new RangeError('Bm25Index.fromState: the term arrays do not agree');
    }
    if (state.lengths.length !== slots || !ends(state.placementOffsets, slots, state.placements.length)) {
      throw new RangeError('Bm25Index.fromState: the document arrays do not agree');
    }
    for (let t = 0; t < terms; t++) {
      const term = state.terms[t];
      const from = state.postingOffsets[t]!;
      const to = state.postingOffsets[t + 1]!;
      index.terms[t] = term ?? undefined;
      if (term !== null && term !== undefined) index.termIds.set(term, t);
      index.df[t] = to - from;
      index.postingSlots[t] = state.postingSlots.subarray(from, to);
      index.postingTfs[t] = state.postingTfs.subarray(from, to);
    }
    index.freeTermIds.push(...state.freeTermIds);
    for (const [slot, id] of state.ids.entries()) {
      index.ids[slot] = id ?? undefined;
      index.lengths[slot] = state.lengths[slot]!;
      const live = id !== null && id !== undefined;
      index.placements[slot] = live
        ? state.placements.subarray(state.placementOffsets[slot]!, state.placementOffsets[slot + 1]!)
        : undefined;
      if (live) index.slots.set(id, slot);
    }
    index.freeSlots.push(...state.freeSlots);
    index.totalLength = state.totalLength;
    return index;
  }

  has(id: string): boolean {
    return this.slots.has(id);
  }

  /** Adds a document; adding an id that is already indexed replaces it. */
  add(doc: Bm25Document): void {
    const tf = new Map<string, number>();
    for (const t of doc.tokens) tf.set(t, (tf.get(t) ?? 0) + 1);
    this.addCounts(doc.id, tf);
  }

  /** Adds (or replaces) a document given as how many times each term occurs in it (counts ≥ 1). */
  addCounts(id: string, tf: ReadonlyMap<string, number>): void {
    this.remove(id);
    const slot = this.freeSlots.pop() ?? this.ids.length;
    let length = 0;
    const placement = new Int32Array(tf.size * 2);
    let i = 0;
    for (const [term, count] of tf) {
      const termId = this.termIdOf(term);
      const at = this.df[termId]!;
      if (at === this.postingSlots[termId]!.length) this.growPosting(termId);
      this.postingSlots[termId]![at] = slot;
      this.postingTfs[termId]![at] = count;
      this.df[termId] = at + 1;
      placement[i] = termId;
      placement[tf.size + i] = at;
      length += count;
      i++;
    }
    this.slots.set(id, slot);
    this.ids[slot] = id;
    this.lengths[slot] = length;
    this.placements[slot] = placement;
    this.totalLength += length;
  }

  /** Removes a document; returns false when the id was not indexed. */
  remove(id: string): boolean {
    const slot = this.slots.get(id);
    if (slot === undefined) return false;
    const placement = this.placements[slot]!;
    const n = placement.length / 2;
    for (let i = 0; i < n; i++) this.unpost(placement[i]!, placement[n + i]!);
    this.slots.delete(id);
    this.ids[slot] = undefined;
    this.placements[slot] = undefined;
    this.freeSlots.push(slot);
    this.totalLength -= this.lengths[slot]!;
    return true;
  }

  private termIdOf(term: string): number {
    let termId = this.termIds.get(term);
    if (termId === undefined) {
      termId = this.freeTermIds.pop() ?? this.terms.length;
      this.termIds.set(term, termId);
      this.terms[termId] = term;
      this.postingSlots[termId] = new Int32Array(INITIAL_POSTING);
      this.postingTfs[termId] = new Int32Array(INITIAL_POSTING);
      this.df[termId] = 0;
    }
    return termId;
  }

  private growPosting(termId: number): void {
    const grown = (from: Int32Array): Int32Array => {
      const to = new Int32Array(Math.max(INITIAL_POSTING, from.length * 2));
      to.set(from);
      return to;
    };
    this.postingSlots[termId] = grown(this.postingSlots[termId]!);
    this.postingTfs[termId] = grown(this.postingTfs[termId]!);
  }

  /** Takes entry `at` out of term `termId`'s posting, moving its last entry (and that document's placement) into the hole. */
  private unpost(termId: number, at: number): void {
    const slots = this.postingSlots[termId]!;
    const tfs = this.postingTfs[termId]!;
    const last = this.df[termId]! - 1;
    if (at !== last) {
      const moved = slots[last]!;
      slots[at] = moved;
      tfs[at] = tfs[last]!;
      const placement = this.placements[moved]!;
      const n = placement.length / 2;
      for (let i = 0; i < n; i++) {
        if (placement[i] === termId) {
          placement[n + i] = at;
          break;
        }
      }
    }
    this.df[termId] = last;
    if (last === 0) {
      this.termIds.delete(this.terms[termId]!);
      this.terms[termId] = undefined;
      this.postingSlots[termId] = EMPTY;
      this.postingTfs[termId] = EMPTY;
      this.freeTermIds.push(termId);
    }
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
   * `maxWeight`, a bound on what `weigh` returns, lets the search stop weighing once no document
   * left could reach the k-th best (documents are weighed best score first); the ranking is the
   * same as without it. The bound must hold; a weight seen above it makes the search weigh every
   * document after all.
   *
   * @example index.search(tokenize('where is the hotpot place'), 10)
   */
  search(queryTokens: readonly string[], k: number, weigh?: (id: string) => number, maxWeight?: number): Bm25Hit[] {
    if (k <= 0 || this.slots.size === 0) return [];
    const avgLength = this.totalLength / this.slots.size || 1;
    if (this.scores.length < this.ids.length) this.scores = new Float64Array(Math.max(64, this.ids.length * 2));
    const scores = this.scores;
    const touched: number[] = [];
    const { k1, b, lengths } = this;
    for (const { termId, times, idf } of this.queryTerms(queryTokens)) {
      const slots = this.postingSlots[termId]!;
      const tfs = this.postingTfs[termId]!;
      for (let at = 0, df = this.df[termId]!; at < df; at++) {
        const slot = slots[at]!;
        const tf = tfs[at]!;
        const norm = tf + k1 * (1 - b + (b * lengths[slot]!) / avgLength);
        if (scores[slot] === 0) touched.push(slot);
        scores[slot]! += times * idf * ((tf * (k1 + 1)) / norm);
      }
    }
    const best = weigh && maxWeight !== undefined ? this.weighedBestFirst(touched, k, weigh, maxWeight) : undefined;
    const hits: Bm25Hit[] = [];
    if (best === undefined) {
      for (const slot of touched) {
        const weight = weigh ? weigh(this.ids[slot]!) : 1;
        if (weight > 0) hits.push({ id: this.ids[slot]!, score: scores[slot]! * weight });
      }
    }
    for (const slot of touched) scores[slot] = 0;
    if (best !== undefined) return best;
    hits.sort(byScoreThenId);
    return hits.slice(0, k);
  }

  /**
   * The best `k` of the `touched` slots by weighted score, weighing them from the best unweighted
   * score down (taken from a heap) and stopping when even `maxWeight` times the next score falls short of the k-th
   * weighted score found. Undefined when a weight exceeds `maxWeight` (the bound was wrong).
   */
  private weighedBestFirst(touched: number[], k: number, weigh: (id: string) => number, maxWeight: number): Bm25Hit[] | undefined {
    const { scores } = this;
    // A max-heap of the slots by score: only what is weighed gets taken out in order, not all sorted.
    const heap = touched.slice();
    for (let i = (heap.length >> 1) - 1; i >= 0; i--) siftDown(heap, i, heap.length, scores);
    const top: Bm25Hit[] = [];
    for (let size = heap.length; size > 0; size--) {
      const slot = heap[0]!;
      heap[0] = heap[size - 1]!;
      siftDown(heap, 0, size - 1, scores);
      const score = scores[slot]!;
      // The margin keeps a document whose bound only rounds below the k-th score: it could tie and win by id.
      if (top.length === k && score * maxWeight * (1 + BOUND_MARGIN) < top[k - 1]!.score) break;
      const id = this.ids[slot]!;
      const weight = weigh(id);
      if (weight > maxWeight) return undefined;
      if (weight <= 0) continue;
      const hit = { id, score: score * weight };
      if (top.length === k && byScoreThenId(hit, top[k - 1]!) >= 0) continue;
      top.splice(insertionPoint(top, hit), 0, hit);
      if (top.length > k) top.pop();
    }
    return top;
  }

  /**
   * The same ranking as `search` weighed 1 for `ids` and 0 for every other document, computed
   * by scoring only `ids` (each query term's frequency looked up per document), so its cost is
   * that of the candidates, not of every document sharing a word with the query.
   */
  searchAmong(queryTokens: readonly string[], ids: Iterable<string>, k: number): Bm25Hit[] {
    if (k <= 0 || this.slots.size === 0) return [];
    const avgLength = this.totalLength / this.slots.size || 1;
    const { k1, b, lengths } = this;
    const terms = this.queryTerms(queryTokens);
    const queryIndex = new Map(terms.map((t, i) => [t.termId, i]));
    const tfs = new Array<number>(terms.length);
    const hits: Bm25Hit[] = [];
    for (const id of ids) {
      const slot = this.slots.get(id);
      if (slot === undefined) continue;
      const placement = this.placements[slot]!;
      const n = placement.length / 2;
      tfs.fill(0);
      let matched = false;
      for (let i = 0; i < n; i++) {
        const q = queryIndex.get(placement[i]!);
        if (q === undefined) continue;
        tfs[q] = this.postingTfs[placement[i]!]![placement[n + i]!]!;
        matched = true;
      }
      if (!matched) continue;
      // Summed in the query's term order, as `search` sums them, so the scores are the same numbers.
      let score = 0;
      for (const [q, { times, idf }] of terms.entries()) {
        const tf = tfs[q]!;
        if (tf === 0) continue;
        const norm = tf + k1 * (1 - b + (b * lengths[slot]!) / avgLength);
        score += times * idf * ((tf * (k1 + 1)) / norm);
      }
      hits.push({ id, score });
    }
    hits.sort(byScoreThenId);
    return hits.slice(0, k);
  }

  /** The query's indexed terms in the order they first occur, with how many times each occurs and its idf. */
  private queryTerms(queryTokens: readonly string[]): { termId: number; times: number; idf: number }[] {
    const queryCounts = new Map<string, number>();
    for (const t of queryTokens) queryCounts.set(t, (queryCounts.get(t) ?? 0) + 1);
    const terms: { termId: number; times: number; idf: number }[] = [];
    for (const [term, times] of queryCounts) {
      const termId = this.termIds.get(term);
      if (termId !== undefined) terms.push({ termId, times, idf: this.idf(term) });
    }
    return terms;
  }
}

const INITIAL_POSTING = 4;
const EMPTY = new Int32Array(0);

/** Restores the max-heap order (by `scores`) of `heap[0, size)` below `at`. */
const siftDown = (heap: number[], at: number, size: number, scores: Float64Array): void => {
  const slot = heap[at]!;
  const score = scores[slot]!;
  let i = at;
  for (;;) {
    let child = 2 * i + 1;
    if (child >= size) break;
    if (child + 1 < size && scores[heap[child + 1]!]! > scores[heap[child]!]!) child++;
    if (scores[heap[child]!]! <= score) break;
    heap[i] = heap[child]!;
    i = child;
  }
  heap[i] = slot;
};

/** Relative slack on the weighing bound, far above the rounding of a product of a few factors. */
const BOUND_MARGIN = 1e-9;

/** Where `hit` goes in `sorted` (by score descending, then id) to keep it sorted. */
const insertionPoint = (sorted: readonly Bm25Hit[], hit: Bm25Hit): number => {
  let lo = 0;
  let hi = sorted.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (byScoreThenId(sorted[mid]!, hit) <= 0) lo = mid + 1;
    else hi = mid;
  }
  return lo;
};

const byScoreThenId = (x: Bm25Hit, y: Bm25Hit): number => y.score - x.score || (x.id < y.id ? -1 : x.id > y.id ? 1 : 0);
