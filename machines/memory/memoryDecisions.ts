/**
 * What the memory decides, as pure functions from what its read models hold to the events it
 * records: which context events sink (prune), which idle cold docs become triples (archive),
 * which personal facts the rule distiller finds, which entity pairs are proposed for merging and
 * what a model's verdict on a merge or a relation does, and what a cold recall moves. Rows come
 * in the shapes the actor reads them into; nothing here reads the log or the clock.
 */
import type { BlockRef, ContextEventData, EventNamed, TripleData } from '../../events/index.ts';
import { decideSink, type PruneConfig } from './contextPruning.ts';
import { proposeMerges } from './mergeProposals.ts';
import { distillPersonalFacts } from './ruleDistiller.ts';

const tokensOf = (text: string): number => Math.max(1, Math.ceil(text.length / 4));

/**
 * Nothing can sink: every event is protected (no more of them than `protectRecent`, and all
 * together within the budget, so the budget bound protects them all too). Lets the actor skip
 * scoring; any larger or longer context is decided in full, whatever its size.
 */
export const nothingCanSink = (events: readonly ContextEventData[], config: PruneConfig): boolean =>
  events.length <= config.protectRecent && events.reduce((n, e) => n + tokensOf(e.text), 0) <= config.budgetTokens;

/** A scope's context row: the event, and its relevance to the input it is pruned against. */
export type ScoredContextEvent = Readonly<{ event: ContextEventData; score: number }>;

/** The events that sink (one cold doc each), as one decision, from the scope's context in time order. */
export const decidePrune = (
  scope: string,
  context: readonly ScoredContextEvent[],
  config: PruneConfig,
  at: number,
): EventNamed<'ContextEventsSunk'>[] => {
  const events = context.map((c) => c.event);
  if (nothingCanSink(events, config)) return [];
  const decision = decideSink(
    context.map((c) => ({ eventId: c.event.eventId, tokens: tokensOf(c.event.text), score: c.score })),
    config,
  );
  const sinking = new Set(decision.sink);
  const docs = context.filter((c) => sinking.has(c.event.eventId)).map((c) => ({ docId: `d-${c.event.eventId}`, events: [c.event] }));
  if (docs.length === 0) return [];
  return [
    {
      type: 'ContextEventsSunk',
      data: {
        scope,
        docs,
        protectedCount: decision.protectedCount,
        reason: 'low relevance to the input, outside the protected recent events',
        at,
      },
    },
  ];
};

/** A cold doc as the archive reads it. */
export type ArchivableDoc = Readonly<{
  docId: string;
  scope: string;
  text: string;
  cites: readonly string[];
  events: readonly ContextEventData[];
}>;

const blocksOf = (events: readonly ContextEventData[]): { blocks?: BlockRef[] } => {
  const blocks = events.flatMap((e) => e.blocks ?? []);
  return blocks.length ? { blocks } : {};
};

/** Idle, rarely read docs become triples: the personal facts they state, and what was said, so nothing said is lost. */
export const decideArchive = (docs: readonly ArchivableDoc[], at: number): EventNamed<'ColdDocDistilled'>[] =>
  docs.map((doc) => {
    const sources = doc.events;
    const speaker = sources[0]?.speaker ?? doc.scope;
    const facts = sources.flatMap((e) => distillPersonalFacts(e.text, e.speaker ?? speaker));
    const base = {
      sourceEventIds: sources.map((e) => e.eventId),
      cites: [...doc.cites],
      ...(sources[0] ? { happenedAt: sources[0].at } : {}),
    };
    const triples: TripleData[] = [
      ...facts.map((f, i) => ({
        relationId: `r-${doc.docId}-${i}`,
        subject: f.subject,
        predicate: f.predicate,
        object: String(f.object),
        confidence: 0.8,
        sentence: f.sentence,
        ...base,
      })),
      // The whole utterance lives on as a sentence; media blocks hang off it and move to the graph with it.
      {
        relationId: `r-${doc.docId}-said`,
        subject: speaker,
        predicate: 'said',
        object: doc.scope,
        confidence: 1,
        sentence: doc.text,
        ...base,
        ...blocksOf(sources),
      },
    ];
    return { type: 'ColdDocDistilled', data: { docId: doc.docId, triples, at } };
  });

/** A context row as the rule distiller reads it. */
export type SaidEvent = Readonly<{
  eventId: string;
  scope: string;
  speaker: string | null;
  text: string;
  cites: readonly string[];
  at: number;
}>;

/** Personal facts said in the span the rule loop covers become triples. */
export const decideRules = (said: readonly SaidEvent[], at: number): EventNamed<'MemoryCommitted'>[] => {
  const triples: TripleData[] = said.flatMap((r) =>
    distillPersonalFacts(r.text, r.speaker ?? r.scope).map((f, i) => ({
      relationId: `r-${r.eventId}-rule-${i}`,
      subject: f.subject,
      predicate: f.predicate,
      object: String(f.object),
      confidence: 0.7,
      sentence: f.sentence,
      sourceEventIds: [r.eventId],
      cites: [...r.cites],
      happenedAt: r.at,
    })),
  );
  return triples.length > 0 ? [{ type: 'MemoryCommitted', data: { triples, by: 'rule', at } }] : [];
};

/** Entity pairs with near-duplicate names are proposed once each (`considered`: `a|b` of earlier proposals). */
export const decideMergeProposals = (
  entities: readonly { entity: string; name: string }[],
  considered: ReadonlySet<string>,
  at: number,
): EventNamed<'MergeProposed'>[] =>
  proposeMerges(entities.map((e) => ({ id: e.entity, name: e.name })))
    .filter((p) => !considered.has(`${p.a}|${p.b}`))
    .map((p) => ({ type: 'MergeProposed', data: { a: p.a, b: p.b, similarity: p.similarity, at } }));

/** A model's verdict on a proposed merge: a merge is applied, a keep changes nothing. */
export const mergeVerdictFacts = (verdict: EventNamed<'MergeDecided'>['data']): EventNamed<'EntitiesMerged'>[] =>
  verdict.decision === 'merge' ? [{ type: 'EntitiesMerged', data: { into: verdict.a, from: verdict.b, by: 'llm', at: verdict.at } }] : [];

/** A relation the review loop may ask a model about. */
export type ReviewableRelation = Readonly<{ relationId: string; confidence: number; sentence: string | null; predicate: string }>;

/** The relations below full confidence that came with a sentence and were not read before, a few per run. */
export const reviewCandidates = <R extends ReviewableRelation>(relations: readonly R[], reviewed: ReadonlySet<string>, limit = 10): R[] =>
  relations.filter((r) => r.confidence < 1 && r.sentence && r.predicate !== 'said' && !reviewed.has(r.relationId)).slice(0, limit);

/** A model's verdict on a relation: `keep` raises it to full confidence, `drop` purges it. */
export const reviewVerdictFacts = (verdict: EventNamed<'RelationReviewed'>['data']): EventNamed<'MemoryPurged' | 'RelationEdited'>[] =>
  verdict.verdict === 'drop'
    ? [{ type: 'MemoryPurged', data: { relationIds: [verdict.relationId], at: verdict.at } }]
    : [{ type: 'RelationEdited', data: { relationId: verdict.relationId, confidence: 1, at: verdict.at } }];

/** Phase 2 of a cold recall: the doc's events come back into L1 at their original times, then the doc leaves L2. */
export const decideRestore = (
  doc: Readonly<{ docId: string; scope: string; events: readonly ContextEventData[] }>,
  at: number,
): EventNamed<'ContextEventsRestored' | 'ColdDocRemoved'>[] => [
  { type: 'ContextEventsRestored', data: { scope: doc.scope, docId: doc.docId, events: [...doc.events], at } },
  { type: 'ColdDocRemoved', data: { docId: doc.docId, reason: 'recalled', at } },
];
