/**
 * An incremental Okapi BM25 index held in memory. Pure: no I/O, no clock, and the same
 * sequence of add/remove calls gives the same rankings; ties are broken by id so results
 * never depend on insertion order.
 */

export type Bm25Document = Readonly<{ id: string; tokens: readonly string[] }>;
export type Bm25Hit = Readonly<{ id: string; score: number }>;
export type Bm25Options = Readonly<{ k1?: number; b?: number }>;

export const DEFAULT_BM25 = { k1: 1.2, b: 0.75 } as const;

export class Bm25Index {
  readonly k1: number;
  readonly b: number;
  /** term → (doc slot → term frequency) */
  private readonly postings = new Map<string, Map<number, number>>();
  /** doc id → its slot, distinct terms and length */
  private readonly docs = new Map<string, { slot: number; terms: readonly string[]; length: number }>();
  /** slot → doc id and length, for scoring without a lookup by id; freed slots are reused. */
  private readonly ids: (string | undefined)[] = [];
  private readonly lengths: number[] = [];
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
    return this.docs.size;
  }

  has(id: string): boolean {
    return this.docs.has(id);
  }

  /** Adds a document; adding an id that is already indexed replaces it. */
  add(doc: Bm25Document): void {
    this.remove(doc.id);
    const slot = this.freeSlots.pop() ?? this.ids.length;
    const tf = new Map<string, number>();
    for (const t of doc.tokens) tf.set(t, (tf.get(t) ?? 0) + 1);
    for (const [term, count] of tf) {
      let posting = this.postings.get(term);
      if (posting === undefined) {
        posting = new Map();
        this.postings.set(term, posting);
      }
      posting.set(slot, count);
    }
    this.docs.set(doc.id, { slot, terms: [...tf.keys()], length: doc.tokens.length });
    this.ids[slot] = doc.id;
    this.lengths[slot] = doc.tokens.length;
    this.totalLength += doc.tokens.length;
  }

  /** Removes a document; returns false when the id was not indexed. */
  remove(id: string): boolean {
    const doc = this.docs.get(id);
    if (doc === undefined) return false;
    for (const term of doc.terms) {
      const posting = this.postings.get(term);
      posting?.delete(doc.slot);
      if (posting?.size === 0) this.postings.delete(term);
    }
    this.docs.delete(id);
    this.ids[doc.slot] = undefined;
    this.freeSlots.push(doc.slot);
    this.totalLength -= doc.length;
    return true;
  }

  /** Number of indexed documents containing `term`. */
  documentFrequency(term: string): number {
    return this.postings.get(term)?.size ?? 0;
  }

  /** ln(1 + (N − df + 0.5) / (df + 0.5)): always positive, largest for rare terms. */
  idf(term: string): number {
    const n = this.docs.size;
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
    if (k <= 0 || this.docs.size === 0) return [];
    const queryCounts = new Map<string, number>();
    for (const t of queryTokens) queryCounts.set(t, (queryCounts.get(t) ?? 0) + 1);
    const avgLength = this.totalLength / this.docs.size || 1;
    if (this.scores.length < this.ids.length) this.scores = new Float64Array(Math.max(64, this.ids.length * 2));
    const scores = this.scores;
    const touched: number[] = [];
    const { k1, b, lengths } = this;
    for (const [term, times] of queryCounts) {
      const posting = this.postings.get(term);
      if (posting === undefined) continue;
      const idf = this.idf(term);
      for (const [slot, tf] of posting) {
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
   * score down and stopping when even `maxWeight` times the next score falls short of the k-th
   * weighted score found. Undefined when a weight exceeds `maxWeight` (the bound was wrong).
   */
  private weighedBestFirst(touched: number[], k: number, weigh: (id: string) => number, maxWeight: number): Bm25Hit[] | undefined {
    const { scores } = this;
    touched.sort((x, y) => scores[y]! - scores[x]!);
    const top: Bm25Hit[] = [];
    for (const slot of touched) {
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
    if (k <= 0 || this.docs.size === 0) return [];
    const queryCounts = new Map<string, number>();
    for (const t of queryTokens) queryCounts.set(t, (queryCounts.get(t) ?? 0) + 1);
    const avgLength = this.totalLength / this.docs.size || 1;
    const { k1, b, lengths } = this;
    const terms: { posting: Map<number, number>; times: number; idf: number }[] = [];
    for (const [term, times] of queryCounts) {
      const posting = this.postings.get(term);
      if (posting !== undefined) terms.push({ posting, times, idf: this.idf(term) });
    }
    const hits: Bm25Hit[] = [];
    for (const id of ids) {
      const doc = this.docs.get(id);
      if (doc === undefined) continue;
      let score = 0;
      let matched = false;
      for (const { posting, times, idf } of terms) {
        const tf = posting.get(doc.slot);
        if (tf === undefined) continue;
        matched = true;
        const norm = tf + k1 * (1 - b + (b * lengths[doc.slot]!) / avgLength);
        score += times * idf * ((tf * (k1 + 1)) / norm);
      }
      if (matched) hits.push({ id, score });
    }
    hits.sort(byScoreThenId);
    return hits.slice(0, k);
  }
}

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
