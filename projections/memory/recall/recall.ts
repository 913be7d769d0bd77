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
  /** The conversation asking: what was said in it counts for more. */
  scope?: string;
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
  const weigh = weighFor(focusOf(q.query, index.persons, q.scope, q.sceneWeights, q.now), q.boosts);
  const ranked = q.vector ? index.items.searchHybrid(q.query, q.vector, q.k * 3, weigh) : index.items.search(q.query, q.k * 3, weigh);
  const hits = distinctHits(ranked, q.k);
  // What the graph adds ranks below the last hit (its score over hops + 1), so with k hits it would not show.
  if (hits.length >= q.k && hits.at(-1)!.score > 0) return hits;
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
