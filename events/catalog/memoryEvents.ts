/**
 * Memory in the log: what entered the working context (L1), the decisions that moved it to
 * cold context (L2) and distilled it into the graph (L3), recalls, and the graph's edits.
 * Stream: `memory`. Each decision carries the content it moves, so every tier's fold reads
 * only its own tables and the event; no fold re-scores anything.
 *
 * A context event is one utterance, tool call or tool result (`role`), in a `scope` (a conversation: channel
 * and target), at its original time. `cites` are the external references it stands for (a
 * benchmark's dia_id, a message id), carried along through every tier. A block is text or
 * media with a content-derived id; exactly one thing holds a block at any time.
 */
import { defineEvent, type EventUnion } from '../defineEvent.ts';
import { array, integer, literal, nonEmptyString, number, object, optional, string, type Infer } from '../schema.ts';
import { llmToolCall } from './turnParts.ts';

export const MEMORY_STREAM = 'memory';

export const block = () =>
  object({ blockId: nonEmptyString(), kind: literal('text', 'media'), mime: optional(string()), text: optional(string()) });

export const contextEvent = () =>
  object({
    eventId: nonEmptyString(),
    role: literal('user', 'agent', 'cold_storage', 'system', 'tool'),
    speaker: optional(string()),
    text: string(),
    at: number(),
    cites: optional(array(string())),
    blocks: optional(array(block())),
    /** An agent event that asked for tools: the calls, as the model made them. */
    toolCalls: optional(array(llmToolCall())),
    /** A tool event: the call it is the result of. */
    toolCallId: optional(string()),
  });

export const triple = () =>
  object({
    relationId: nonEmptyString(),
    subject: nonEmptyString(),
    predicate: nonEmptyString(),
    object: nonEmptyString(),
    confidence: number(),
    /** The sentence the triple came from, and the context events (and their cites) it stands for. */
    sentence: optional(string()),
    sourceEventIds: optional(array(string())),
    cites: optional(array(string())),
    blocks: optional(array(block())),
    /** When what it stands for was said (its first source event's time). */
    happenedAt: optional(number()),
  });

/** Features of a scene or of the situation an input happened in. */
export const sceneFeatures = () =>
  object({
    channel: optional(string()),
    peer: optional(string()),
    tools: array(string()),
    topic: array(string()),
    timeOfDay: optional(literal('night', 'morning', 'afternoon', 'evening')),
  });

export const situation = () =>
  object({ channel: optional(string()), peer: optional(string()), tools: optional(array(string())), text: string(), at: number() });

export const memoryEvents = {
  /**
   * An utterance enters L1: the memory's input. An input (not a reply) comes with the situation
   * it happened in, which the scene actor decides from; `declaredKey` names a plugin's declared scene.
   */
  ContextEventAppended: defineEvent(
    'ContextEventAppended',
    object({
      scope: nonEmptyString(),
      event: contextEvent(),
      situation: optional(situation()),
      declaredKey: optional(string()),
      /**
       * With a dense space: how relevant each context event of the scope is to this one (dense
       * and keyword ranks fused), the input the prune decides from. Recorded because the vectors
       * are a cache, not the log: replay re-decides from these scores.
       */
      relevance: optional(array(object({ eventId: nonEmptyString(), score: number() }))),
    }),
  ),
  /** The context actor's decision: these events sink into new cold docs (L1 → L2), their blocks with them. */
  ContextEventsSunk: defineEvent(
    'ContextEventsSunk',
    object({
      scope: nonEmptyString(),
      /** Each new doc and the events it holds, in time order. */
      docs: array(object({ docId: nonEmptyString(), events: array(contextEvent()) })),
      /** How many recent events were protected, and the budget that bounded it. */
      protectedCount: integer(),
      reason: string(),
      at: number(),
    }),
    // v1 recorded one event per doc.
    {
      schemaVersion: 2,
      upcasters: [
        {
          from: 1,
          up: ({ docId, events, ...v1 }: { docId: string; events: unknown[]; [key: string]: unknown }) => ({
            ...v1,
            docs: [{ docId, events }],
          }),
        },
      ],
    },
  ),
  /** A doc written directly to cold context (coldcontext_commit). */
  ColdDocCommitted: defineEvent(
    'ColdDocCommitted',
    object({
      scope: nonEmptyString(),
      docId: nonEmptyString(),
      text: string(),
      cites: optional(array(string())),
      blocks: optional(array(block())),
      at: number(),
    }),
  ),
  /** Phase 1 of coldcontext_query: the doc was read; it stays in L2. */
  ColdDocPeeked: defineEvent('ColdDocPeeked', object({ docId: nonEmptyString(), query: string(), at: number() })),
  /** Phase 2a: the doc's events are back in L1 at their original times (their blocks move back with them). */
  ContextEventsRestored: defineEvent(
    'ContextEventsRestored',
    object({ scope: nonEmptyString(), docId: nonEmptyString(), events: array(contextEvent()), at: number() }),
  ),
  /** Phase 2b: the source copy leaves L2, only after the restore is in the log. */
  ColdDocRemoved: defineEvent(
    'ColdDocRemoved',
    object({ docId: nonEmptyString(), reason: literal('recalled', 'distilled', 'purged'), at: number() }),
  ),
  /** Archive: a cold doc (≤ 2 accesses, 72 h idle) became triples; its text lives on as their sentences. */
  ColdDocDistilled: defineEvent('ColdDocDistilled', object({ docId: nonEmptyString(), triples: array(triple()), at: number() })),
  /** Triples written to the graph (memory_commit, the rule distiller). */
  MemoryCommitted: defineEvent(
    'MemoryCommitted',
    object({ triples: array(triple()), by: literal('tool', 'rule', 'archive', 'merge'), at: number() }),
  ),
  EntitiesMerged: defineEvent(
    'EntitiesMerged',
    object({ into: nonEmptyString(), from: nonEmptyString(), by: literal('tool', 'llm'), at: number() }),
  ),
  EntityEdited: defineEvent(
    'EntityEdited',
    object({ entity: nonEmptyString(), renameTo: optional(nonEmptyString()), kind: optional(string()), at: number() }),
  ),
  RelationEdited: defineEvent(
    'RelationEdited',
    object({
      relationId: nonEmptyString(),
      predicate: optional(nonEmptyString()),
      object: optional(nonEmptyString()),
      confidence: optional(number()),
      at: number(),
    }),
  ),
  /** memory_delete_entity: the entity and every relation touching it (listed, as decided). */
  EntityDeleted: defineEvent('EntityDeleted', object({ entity: nonEmptyString(), relationIds: array(string()), at: number() })),
  /** memory_purge: relations (one, or all of an entity) removed; entities left without relations go too. */
  MemoryPurged: defineEvent('MemoryPurged', object({ relationIds: array(string()), at: number() })),
  /** MarkRecalled: a tool fetched the entity during this turn, so automatic recall does not inject it again. */
  EntityRecalled: defineEvent('EntityRecalled', object({ entity: nonEmptyString(), turn: nonEmptyString(), at: number() })),
  MergeProposed: defineEvent('MergeProposed', object({ a: nonEmptyString(), b: nonEmptyString(), similarity: number(), at: number() })),
  MergeDecided: defineEvent(
    'MergeDecided',
    object({ a: nonEmptyString(), b: nonEmptyString(), decision: literal('merge', 'keep'), reason: optional(string()), at: number() }),
  ),
  /** The review loop: a model read a relation against its sentence; 'keep' raises it to full confidence, 'drop' purges it. */
  RelationReviewed: defineEvent(
    'RelationReviewed',
    object({ relationId: nonEmptyString(), verdict: literal('keep', 'drop'), reason: string(), at: number() }),
  ),
  /** Recorded by builds before 2026-12-01 (the situation now comes with ContextEventAppended); kept so old logs read. */
  SituationObserved: defineEvent(
    'SituationObserved',
    object({
      situation: situation(),
      declaredKey: optional(string()),
      eventId: optional(string()),
      at: number(),
    }),
  ),
  SceneCandidateNoted: defineEvent(
    'SceneCandidateNoted',
    object({
      candidateId: nonEmptyString(),
      fingerprint: sceneFeatures(),
      at: number(),
      droppedCandidate: optional(string()),
      eventId: optional(string()),
    }),
  ),
  SceneCreated: defineEvent(
    'SceneCreated',
    object({
      sceneId: nonEmptyString(),
      kind: literal('declared', 'emergent'),
      key: optional(string()),
      features: sceneFeatures(),
      strength: number(),
      at: number(),
      fromCandidate: optional(string()),
      similarity: optional(number()),
      eventId: optional(string()),
    }),
  ),
  SceneJoined: defineEvent(
    'SceneJoined',
    object({
      sceneId: nonEmptyString(),
      similarity: number(),
      strength: number(),
      features: sceneFeatures(),
      at: number(),
      eventId: optional(string()),
    }),
  ),
  /** `since`: the loop's previous firing (the rule distiller reads what was said after it). */
  HeartbeatFired: defineEvent(
    'HeartbeatFired',
    object({ loop: literal('distill', 'archive', 'merge', 'review', 'rules'), at: number(), since: number() }),
    // v1 recorded firings before `since` existed: such a firing covered what came before it.
    {
      schemaVersion: 2,
      upcasters: [{ from: 1, up: (v1: { loop: string; at: number; since?: number }) => ({ ...v1, since: v1.since ?? v1.at }) }],
    },
  ),
  /**
   * A clock reading `at` came before where the loop left off (`leftOffAt`, its last firing or
   * start-over): the clock went back, and the loop starts over from `at`, as after its first start.
   */
  HeartbeatStartedOver: defineEvent(
    'HeartbeatStartedOver',
    object({ loop: literal('distill', 'archive', 'merge', 'review', 'rules'), at: number(), leftOffAt: number() }),
  ),
} as const;

export type MemoryEvent = EventUnion<typeof memoryEvents>;

export type BlockRef = Infer<ReturnType<typeof block>>;
export type ContextEventData = Infer<ReturnType<typeof contextEvent>>;
export type TripleData = Infer<ReturnType<typeof triple>>;
export type SceneFeatures = Infer<ReturnType<typeof sceneFeatures>>;
export type Situation = Infer<ReturnType<typeof situation>>;
