/**
 * The one recall path (turns, memory tools, the benchmark): L1 events, L2 docs and L3 sentences
 * ranked together for a query by what it is about (`focusOf`), one hit per utterance, then the
 * graph's neighbourhood (depth 2) of the entities the query names and of the facts found. Pure:
 * the index, the read models and the query's vector are given.
 */
import type { ReadModelTx } from '../../projection.ts';
import { graphNeighbourhood, relationsById } from '../graphProjection.ts';
import { relationItem, type MemoryIndex } from './memoryIndex.ts';
import type { RecallHit } from './recallIndex.ts';
import { focusOf, type RecallBoosts, weighFor } from './recallWeights.ts';

export type RecallQuery = Readonly<{
  query: string;
  k: number;
  /** The conversation asking: only what was said in it counts, and the graph. */
  scope?: string;
  /** Only the scope's own items, not the graph every conversation shares (a guest asks). */
  ownOnly?: boolean;
  /** Context events of the scenes the asking situation recalls, with their weights. */
  sceneWeights?: ReadonlyMap<string, number>;
  /** When the question is asked ("yesterday" is the day before it). */
  now: number;
  /** The query in the dense space, when one is configured. */
  vector?: Float32Array;
  /** How much each kind of focus counts (RECALL_BOOSTS unless a benchmark varies them). */
  boosts?: RecallBoosts;
}>;

/** The first `k` hits that each stand for something not already recalled (a fact distilled from an utterance adds nothing next to it). */
export const distinctHits = (ranked: readonly RecallHit[], k: number): RecallHit[] => {
  const covered = new Set<string>();
  const out: RecallHit[] = [];
  for (const hit of ranked) {
    if (out.length >= k) break;
    const sources = hit.sources ?? [];
    if (sources.length > 0 && sources.every((s) => covered.has(s))) continue;
    for (const s of sources) covered.add(s);
    out.push(hit);
  }
  return out;
};

/** How many hits a recall of k asks the words for: first FIRST_POOL × k, then, if too few were distinct, POOL × k. */
const FIRST_POOL = 1.5;
const POOL = 3;

/**
 * The first `k` distinct of the best `POOL × k` that `search` ranks, asking it first for fewer: a
 * smaller pool's ranking is the start of a larger one's, so when its distinct hits fill k (or it
 * holds every match) they are the same hits; and a smaller k costs a search less (a higher k-th
 * lets it pass over more).
 */
export const distinctBest = (search: (pool: number) => readonly RecallHit[], k: number): RecallHit[] => {
  const firstPool = Math.ceil(k * FIRST_POOL);
  const first = search(firstPool);
  const hits = distinctHits(first, k);
  return hits.length >= k || first.length < firstPool ? hits : distinctHits(search(k * POOL), k);
};

/** Where the graph walk starts: the entities the query names (every word of the name is in it), and the ends of the facts found. */
const graphSeeds = (index: MemoryIndex, tx: ReadModelTx, query: string, hits: readonly RecallHit[]): string[] => {
  const named = index.entitiesNamedIn(new Set(index.tokenize(query)));
  const facts = relationsById(
    tx,
    hits.filter((h) => h.tier === 'graph').map((h) => h.id.slice('rel:'.length)),
  )
    .filter((r) => r.predicate !== 'said')
    .flatMap((r) => [r.subject, r.object]);
  return [...new Set([...named, ...facts])].sort();
};

export const recall = (index: MemoryIndex, tx: ReadModelTx, q: RecallQuery): RecallHit[] => {
  const ownOnly = q.ownOnly === true && q.scope !== undefined;
  const focus = focusOf(q.query, index.persons, q.scope, q.sceneWeights, q.now);
  const weigh = weighFor(ownOnly ? { ...focus, ownOnly } : focus, q.boosts);
  // A fused ranking is not the start of a larger pool's: it is asked for the whole pool at once.
  const hits = q.vector
    ? distinctHits(index.items.searchHybrid(q.query, q.vector, q.k * POOL, weigh), q.k)
    : distinctBest((pool) => index.items.search(q.query, pool, weigh), q.k);
  // What the graph adds ranks below the last hit (its score over hops + 1), so with k hits it would not show.
  if (ownOnly || (hits.length >= q.k && hits.at(-1)!.score > 0)) return hits;
  const seeds = graphSeeds(index, tx, q.query, hits);
  if (seeds.length === 0) return hits;
  const seen = new Set(hits.map((h) => h.id));
  const extra = graphNeighbourhood(tx, seeds, 2, { without: 'said' })
    .filter(({ relation }) => !seen.has(`rel:${relation.relation_id}`))
    .map(({ relation, hops }): RecallHit => ({ ...relationItem(relation), score: (hits.at(-1)?.score ?? 1) / (hops + 1) }));
  // Stable: on a tie, what the words found stays ahead of what the graph adds.
  return distinctHits(
    [...hits, ...extra].sort((a, b) => b.score - a.score),
    q.k,
  );
};
