/**
 * The memory as one journaled actor on the `memory` stream. Each message — an utterance entering
 * L1, a heartbeat loop firing, what a memory tool decided, a cold recall's peek or restore, a
 * model's verdict on a merge or a relation, the memory's start — is recorded with the decisions
 * the pure deciders make for it from the read models (machines/memory), in one append. The read
 * models move inline in that append; the recall index follows each recorded event; asking a
 * model is an effect after the commit, whose answer comes back as a message.
 */
import type { InspectionEvent } from 'xstate';
import {
  MEMORY_STREAM,
  type ContextEventData,
  type EventNamed,
  type EventStore,
  type HologramEvent,
  type Recorded,
  type Situation,
} from '../../events/index.ts';
import {
  decideArchive,
  decideMergeProposals,
  decidePrune,
  decideRestore,
  decideRules,
  decideScene,
  mergeVerdictFacts,
  nothingCanSink,
  reviewCandidates,
  reviewVerdictFacts,
  type HeartbeatLoop,
  type PruneConfig,
} from '../../machines/memory/index.ts';
import {
  allRelations,
  coldDocById,
  coldDocsToArchive,
  consideredMergePairs,
  contextOf,
  contextSaidBetween,
  entities,
  graphNeighbourhood,
  loopsLeftOff,
  latestInputs,
  reviewedRelations,
  type ColdDocRow,
  rowEvent,
  type MemoryIndex,
  type ReadModelTx,
  type RecallHit,
} from '../../projections/index.ts';
import { Journal, type Fact, type TimedMessage } from '../journal/journal.ts';
import { HeartbeatLoops } from './heartbeatLoops.ts';
import type { MergeJudge, RelationJudge } from './mergeJudge.ts';
import { sceneStateOf, situationFingerprint } from './memoryScenes.ts';

/** What the memory decides from, besides its read models. */
export type MemoryDecisionConfig = Readonly<{
  prune: PruneConfig;
  /** Cold docs read at most this often and idle this long are distilled into the graph. */
  archiveMaxAccesses: number;
  archiveIdleMs: number;
}>;

/** The messages of the memory's journal that are not declared events themselves (recorded in `InputDelivered`). */
export type MemoryCommand =
  | Readonly<{ type: 'memory.start'; at: number; run?: MemoryRun }>
  | Readonly<{ type: 'memory.heartbeat'; at: number; loop: HeartbeatLoop }>
  | Readonly<{ type: 'memory.record'; at: number; events: readonly Fact[] }>
  /** A peek for a guest names its conversation: only that conversation's docs are read. */
  | Readonly<{ type: 'memory.peek'; at: number; query: string; k: number; scope?: string }>
  | Readonly<{ type: 'memory.restore'; at: number; docId: string }>;

/** The declared events that are messages of the memory's journal. */
export const MEMORY_INPUT_TYPES = ['ContextEventAppended', 'MergeDecided', 'RelationReviewed'] as const;

export type MemoryMessage = MemoryCommand | (EventNamed<(typeof MEMORY_INPUT_TYPES)[number]> & Readonly<{ at: number }>);

/** The event types a memory tool may decide (recorded as what it decided). */
const TOOL_DECIDED: ReadonlySet<string> = new Set([
  'MemoryCommitted',
  'EntitiesMerged',
  'EntityEdited',
  'RelationEdited',
  'EntityDeleted',
  'MemoryPurged',
  'EntityRecalled',
  'ColdDocCommitted',
]);

export class MemoryCommandRefused extends Error {}

/**
 * What a boot's decisions depend on besides the log: recorded in its `memory.start`, so a
 * replay decides with what the daemon decided with, whatever settings.json says later.
 */
export type MemoryRun = Readonly<{ prune: MemoryDecisionConfig['prune']; intervals: Partial<Record<HeartbeatLoop, number>> }>;

export type MemoryActorOptions = Readonly<{
  store: EventStore;
  tx: ReadModelTx;
  index: MemoryIndex;
  config: MemoryDecisionConfig;
  intervals: Partial<Record<HeartbeatLoop, number>>;
  /** Sees the heartbeat loops' machines (the web UI's machines view). */
  inspect?: (event: InspectionEvent) => void;
  /** Asks a model about proposed merges; without one they stay proposals. */
  mergeJudge?: MergeJudge;
  /** Asks a model about uncertain relations; without one the review loop only records its firing. */
  relationJudge?: RelationJudge;
  /** Runs after each commit (the vectors of new items). */
  afterCommit?: () => Promise<void>;
  /** Where a failed effect (a judge that could not answer) is told. */
  log?: (line: string) => void;
  now: () => number;
}>;

const archivable = (doc: ColdDocRow) => ({
  docId: doc.doc_id,
  scope: doc.scope,
  text: doc.text,
  cites: JSON.parse(doc.cites) as string[],
  events: JSON.parse(doc.events) as ContextEventData[],
});

export class MemoryActor {
  private readonly journal: Journal;
  private readonly loops: HeartbeatLoops;
  private readonly effects = new Set<Promise<unknown>>();
  /** The prune bounds of this boot: the options' until a `memory.start` says otherwise. */
  private pruneConfig: MemoryDecisionConfig['prune'];

  constructor(private readonly options: MemoryActorOptions) {
    this.journal = new Journal(options.store, MEMORY_STREAM, (message) =>
      (MEMORY_INPUT_TYPES as readonly string[]).includes(message.type) ? 'as-event' : 'InputDelivered',
    );
    this.loops = new HeartbeatLoops(options.intervals, options.inspect);
    this.pruneConfig = options.config.prune;
  }

  /** The memory starts (each boot): recorded, so a replay starts its heartbeats at the same time. */
  start(at: number): Promise<readonly Fact[]> {
    return this.deliver({ type: 'memory.start', at, run: { prune: this.options.config.prune, intervals: this.options.intervals } });
  }

  /** The heartbeat loops' machines as they stand (time travel shows them). */
  loopStates(): ReturnType<HeartbeatLoops['states']> {
    return this.loops.states();
  }

  /** When the next heartbeat loop is due, for the runtime's timer. */
  nextDueAt(): number | null {
    return this.loops.nextDueAt();
  }

  /** Every loop due at `at` fires, one message each, in their fixed order; @returns the loops that fired. */
  async tick(at: number): Promise<HeartbeatLoop[]> {
    const fired: HeartbeatLoop[] = [];
    for (const loop of this.loops.dueAt(at)) {
      const facts = await this.deliver({ type: 'memory.heartbeat', at, loop });
      if (facts.some((fact) => fact.type === 'HeartbeatFired')) fired.push(loop);
    }
    return fired;
  }

  /** Journals a message with what the memory decides for it. */
  deliver(message: MemoryMessage): Promise<readonly Fact[]> {
    return this.journal.serially(async () => {
      this.journal.assertWhole();
      const facts = this.decide(message);
      const recorded = await this.journal.record(message as TimedMessage, facts);
      const skipInput = message.type === 'ContextEventAppended'; // the index saw it before deciding
      for (const event of skipInput ? recorded.slice(1) : recorded) this.options.index.apply(event);
      this.afterCommit(message, facts);
      await this.options.afterCommit?.();
      return facts;
    });
  }

  /**
   * Runs `step` while no memory message is decided or recorded (after those delivered before it),
   * and only while every message so far is in the log: once an append failed, what the memory
   * holds may be ahead of the log (the index saw the utterance first), so this throws JournalBroken.
   */
  exclusively<T>(step: () => Promise<T>): Promise<T> {
    return this.journal.serially(() => {
      this.journal.assertWhole();
      return step();
    });
  }

  /** Resolves when every message so far is recorded and every model asked since has answered (and its answer is recorded). */
  async settled(): Promise<void> {
    await this.journal.settled();
    while (this.effects.size > 0) {
      await Promise.allSettled([...this.effects]);
      await this.journal.settled();
    }
  }

  /** What the memory decides for a message: pure deciders over the read models as they are before it. */
  decide(message: MemoryMessage): Fact[] {
    const { tx } = this.options;
    switch (message.type) {
      case 'memory.start':
        if (message.run) this.pruneConfig = message.run.prune;
        return this.loops.restart(message.at, loopsLeftOff(tx), message.run?.intervals);
      case 'ContextEventAppended':
        return this.observed(message);
      case 'memory.heartbeat':
        return this.fire(message.loop, message.at);
      case 'memory.record': {
        const foreign = message.events.find((e) => !TOOL_DECIDED.has(e.type));
        if (foreign) throw new MemoryCommandRefused(`a memory tool may not record '${foreign.type}'`);
        return [...message.events];
      }
      case 'memory.peek':
        return this.peekHits(message.query, message.k, message.scope).map((h) => ({
          type: 'ColdDocPeeked',
          data: { docId: h.id.slice('doc:'.length), query: message.query, at: message.at },
        }));
      case 'memory.restore': {
        const doc = coldDocById(tx, message.docId);
        if (!doc) throw new MemoryCommandRefused(`cold doc '${message.docId}' is not in cold context (already recalled or distilled?)`);
        return decideRestore(archivable(doc), message.at);
      }
      case 'MergeDecided':
        return mergeVerdictFacts(message.data);
      case 'RelationReviewed':
        return reviewVerdictFacts(message.data);
      default: {
        const unknown: never = message;
        throw new Error(`memory: unknown message ${(unknown as { type: string }).type}`);
      }
    }
  }

  /** The cold docs that match a query, best first: what a peek reads. */
  /** The cold docs that match `query`, best first; of `scope` alone when given. */
  peekHits(query: string, k: number, scope?: string): RecallHit[] {
    return this.options.index.items.search(query, k, (item) =>
      item.tier === 'cold' && (scope === undefined || item.scope === scope) ? 1 : 0,
    );
  }

  private observed(message: Extract<MemoryMessage, { type: 'ContextEventAppended' }>): Fact[] {
    const { scope, event, situation, declaredKey } = message.data;
    // The index sees the utterance first: its words count in the scores the prune compares.
    this.options.index.apply({
      ...message,
      seq: 0,
      stream: MEMORY_STREAM,
      version: 0,
      id: '',
      schemaVersion: 1,
      causation: null,
      correlation: null,
    } as Recorded);
    const facts: Fact[] = event.role === 'user' ? this.prune(scope, event.text, message.at, event, message.data.relevance) : [];
    if (situation) facts.push(...this.scene(situation, declaredKey, event.eventId));
    return facts;
  }

  /**
   * Scores the scope's context against `query` and sinks what the decision says. `recorded`: the
   * relevance the message carries (dense + keyword, scored before it was recorded); without it,
   * keyword scores from the index.
   */
  private prune(
    scope: string,
    query: string,
    at: number,
    arriving?: ContextEventData,
    recorded?: readonly { eventId: string; score: number }[],
  ): EventNamed<'ContextEventsSunk'>[] {
    const context = [...contextOf(this.options.tx, scope).map(rowEvent), ...(arriving ? [arriving] : [])];
    if (nothingCanSink(context, this.pruneConfig)) return [];
    const relevance = recorded
      ? new Map(recorded.map((r) => [r.eventId, r.score]))
      : this.options.index.contextRelevance(scope, query, context.length);
    return decidePrune(
      scope,
      context.map((event) => ({ event, score: relevance.get(event.eventId) ?? 0 })),
      this.pruneConfig,
      at,
    );
  }

  private scene(situation: Situation, declaredKey: string | undefined, eventId: string): Fact[] {
    const { decisions } = decideScene(sceneStateOf(this.options.tx), {
      fingerprint: situationFingerprint(situation),
      at: situation.at,
      ...(declaredKey ? { declaredKey } : {}),
    });
    return decisions.map((d) => ({ ...d, data: { ...d.data, eventId } }) as HologramEvent);
  }

  private fire(loop: HeartbeatLoop, at: number): Fact[] {
    const decided = this.loops.fire(loop, at);
    const fired = decided.find((fact) => fact.type === 'HeartbeatFired');
    if (!fired) return decided;
    const firing = fired.data;
    const { tx, config } = this.options;
    switch (loop) {
      case 'distill':
        return [fired, ...latestInputs(tx).flatMap(({ scope, text }) => this.prune(scope, text, at))];
      case 'archive':
        return [fired, ...decideArchive(coldDocsToArchive(tx, at - config.archiveIdleMs, config.archiveMaxAccesses).map(archivable), at)];
      case 'rules': {
        const said = contextSaidBetween(tx, firing.since, at).map((r) => ({
          eventId: r.event_id,
          scope: r.scope,
          speaker: r.speaker,
          text: r.text,
          cites: JSON.parse(r.cites) as string[],
          at: r.at,
        }));
        return [fired, ...decideRules(said, at)];
      }
      case 'merge':
        return [fired, ...decideMergeProposals(entities(tx), consideredMergePairs(tx), at)];
      case 'review':
        return [fired];
    }
  }

  /** The effects of committed facts: models asked about merges and relations; their answers come back as messages. */
  private afterCommit(message: MemoryMessage, facts: readonly Fact[]): void {
    const { mergeJudge, relationJudge, tx } = this.options;
    for (const fact of facts) {
      if (fact.type === 'MergeProposed' && mergeJudge) {
        const { a, b } = fact.data;
        const sentences = (entity: string) =>
          graphNeighbourhood(tx, [entity], 1).map(
            ({ relation }) => relation.sentence ?? `${relation.subject} ${relation.predicate} ${relation.object}`,
          );
        const evidence = { a: sentences(a), b: sentences(b) };
        this.effect(async () => {
          const verdict = await mergeJudge(a, b, evidence);
          await this.deliver({
            type: 'MergeDecided',
            data: { a, b, decision: verdict.decision, reason: verdict.reason, at: this.options.now() },
            at: this.options.now(),
          });
        });
      }
      if (fact.type === 'HeartbeatFired' && fact.data.loop === 'review' && relationJudge && message.type === 'memory.heartbeat') {
        const candidates = reviewCandidates(
          allRelations(tx).map((r) => ({ ...r, relationId: r.relation_id })),
          reviewedRelations(tx),
        );
        for (const r of candidates) {
          this.effect(async () => {
            const { verdict, reason } = await relationJudge({
              relationId: r.relation_id,
              subject: r.subject,
              predicate: r.predicate,
              object: r.object,
              sentence: r.sentence!,
            });
            const at = this.options.now();
            await this.deliver({ type: 'RelationReviewed', data: { relationId: r.relation_id, verdict, reason, at }, at });
          });
        }
      }
    }
  }

  private effect(run: () => Promise<void>): void {
    const running = run().catch((error: unknown) => this.options.log?.(`memory: a model could not be asked: ${(error as Error).message}`));
    this.effects.add(running);
    void running.finally(() => this.effects.delete(running));
  }
}
