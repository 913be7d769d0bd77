/**
 * The retrieval index over every tier: L1 context events, L2 cold docs and L3 relation
 * sentences, each an item with its text, the external references it cites and its tier. It is
 * a cache derived from memory events (rebuilt from the read models at start), never a source
 * of truth. Scoring is BM25 over lexical tokens; each context item also carries its
 * neighbours' words at lower weight, since an answer often spans adjacent utterances.
 */
import { Bm25Index, tokenize } from '../../adapters/embeddings/lexical/index.ts';
import { cosine } from '../../adapters/embeddings/embeddingProvider.ts';

export type RecallTier = 'context' | 'cold' | 'graph';

export type RecallItem = Readonly<{
  id: string;
  tier: RecallTier;
  scope: string;
  text: string;
  cites: readonly string[];
  at: number;
  /** The context events the item stands for (what scenes have as members). */
  sources?: readonly string[];
}>;

export type RecallHit = RecallItem & Readonly<{ score: number }>;

/** Reciprocal rank fusion constant (Cormack et al.). */
const RRF_K = 60;

/** Own words count this many times; a neighbour's once. */
const OWN_WEIGHT = 3;

export class RecallIndex {
  private readonly bm25 = new Bm25Index();
  private readonly items = new Map<string, RecallItem & { tokens: string[]; neighbours: string[] }>();
  private readonly tokenCache = new Map<string, string[]>();
  /** Where an item went when it moved tier, so late neighbours still find it. */
  private readonly movedTo = new Map<string, string>();
  /** Dense vectors of the items, in the one space of the configured provider (none without one). */
  private readonly vectors = new Map<string, Float32Array>();
  /** Items indexed since the last `drainUnembedded`, which need a vector. */
  private readonly unembedded = new Set<string>();

  get size(): number {
    return this.items.size;
  }

  has(id: string): boolean {
    return this.items.has(id);
  }

  /** Adds (or replaces) an item; `neighbourTexts` widen what it matches. */
  put(item: RecallItem, neighbourTexts: readonly string[] = []): void {
    this.movedTo.delete(item.id);
    const tokens = this.tokens(item.text);
    const neighbours = neighbourTexts.flatMap((t) => this.tokens(t));
    this.items.set(item.id, { ...item, tokens, neighbours });
    this.unembedded.add(item.id);
    this.reindex(item.id);
  }

  /** Adds words of a neighbour that arrived later. */
  addNeighbour(id: string, text: string): void {
    const resolved = this.resolve(id);
    const item = this.items.get(resolved);
    if (!item) return;
    item.neighbours = [...item.neighbours, ...this.tokens(text)];
    this.reindex(resolved);
  }

  /** The same content under a new id and tier (it sank, or was distilled): its neighbours' words go with it. */
  move(fromId: string, item: RecallItem): void {
    const old = this.items.get(fromId);
    const vector = this.vectors.get(fromId);
    this.remove(fromId);
    if (vector && item.text === old?.text) this.vectors.set(item.id, vector);
    else this.unembedded.add(item.id);
    this.movedTo.set(fromId, item.id);
    this.items.set(item.id, { ...item, tokens: this.tokens(item.text), neighbours: old?.neighbours ?? [] });
    this.reindex(item.id);
  }

  setVector(id: string, vector: Float32Array): void {
    if (this.items.has(id)) this.vectors.set(id, vector);
  }

  /** The items that have no vector yet (and forgets them). */
  drainUnembedded(): { id: string; text: string }[] {
    const out = [...this.unembedded].flatMap((id) => {
      const item = this.items.get(id);
      return item && !this.vectors.has(id) ? [{ id, text: item.text }] : [];
    });
    this.unembedded.clear();
    return out;
  }

  remove(id: string): void {
    this.unembedded.delete(id);
    this.vectors.delete(id);
    this.items.delete(id);
    this.bm25.remove(id);
  }

  get(id: string): RecallItem | undefined {
    return this.items.get(this.resolve(id));
  }

  private resolve(id: string): string {
    let current = id;
    for (let hops = 0; !this.items.has(current) && this.movedTo.has(current) && hops < 8; hops++) current = this.movedTo.get(current)!;
    return current;
  }

  search(query: string, k: number, filter?: (item: RecallItem) => boolean): RecallHit[] {
    const terms = tokenize(query);
    if (terms.length === 0) return [];
    const hits = this.bm25.search(terms, filter ? Math.max(k * 4, 50) : k);
    const out: RecallHit[] = [];
    for (const hit of hits) {
      const item = this.items.get(hit.id);
      if (!item || (filter && !filter(item))) continue;
      out.push({ id: item.id, tier: item.tier, scope: item.scope, text: item.text, cites: item.cites, at: item.at, ...(item.sources ? { sources: item.sources } : {}), score: hit.score });
      if (out.length >= k) break;
    }
    return out;
  }

  /**
   * Dense + keyword: BM25 and cosine similarity each rank the items, and the two rankings are
   * fused by reciprocal rank (k = 60), so neither score scale dominates. Items without a vector
   * take part through their keyword rank only.
   */
  searchHybrid(query: string, queryVector: Float32Array, k: number, filter?: (item: RecallItem) => boolean): RecallHit[] {
    const pool = Math.max(k * 4, 50);
    const keyword = this.search(query, pool, filter);
    const dense = [...this.vectors]
      .filter(([id]) => !filter || filter(this.items.get(id)!))
      .map(([id, v]) => ({ id, score: cosine(queryVector, v) }))
      .sort((a, b) => b.score - a.score || (a.id < b.id ? -1 : 1))
      .slice(0, pool);
    const fused = new Map<string, number>();
    keyword.forEach((h, rank) => fused.set(h.id, (fused.get(h.id) ?? 0) + 1 / (RRF_K + rank + 1)));
    dense.forEach((h, rank) => fused.set(h.id, (fused.get(h.id) ?? 0) + 1 / (RRF_K + rank + 1)));
    return [...fused]
      .sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1))
      .slice(0, k)
      .map(([id, score]) => {
        const item = this.items.get(id)!;
        return { id, tier: item.tier, scope: item.scope, text: item.text, cites: item.cites, at: item.at, ...(item.sources ? { sources: item.sources } : {}), score };
      });
  }

  private tokens(text: string): string[] {
    let tokens = this.tokenCache.get(text);
    if (!tokens) {
      tokens = tokenize(text);
      if (this.tokenCache.size > 50_000) this.tokenCache.clear();
      this.tokenCache.set(text, tokens);
    }
    return tokens;
  }

  private reindex(id: string): void {
    const item = this.items.get(id)!;
    const own = Array.from({ length: OWN_WEIGHT }, () => item.tokens).flat();
    this.bm25.remove(id);
    this.bm25.add({ id, tokens: [...own, ...item.neighbours] });
  }
}
