/**
 * Replays the memory's decisions: a fresh memory gets the recorded inputs again (context events
 * as they were observed, the times the heartbeats fired, and what tools and models did, which
 * are recorded facts), and the decisions it makes itself — whether a loop was due then and what
 * span it covers, what sinks, what is archived into the graph, which facts the rule distiller
 * reads, which merges it proposes, which scene an input's situation joins — must equal the
 * recorded ones, event by event. Scene decisions of logs written before situations were
 * recorded are re-applied as recorded. The first difference is reported with its seq.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SqliteEventStore } from '../../adapters/sqlite/sqliteEventStore.ts';
import {
  bareEvent,
  createDefaultCatalog,
  MEMORY_STREAM,
  SequentialIds,
  VirtualClock,
  type EventStore,
  type IdSource,
  type RecordedEvent,
} from '../../events/index.ts';
import type { ContextEventData } from '../../projections/index.ts';
import { firstDifference, type ReplayDivergence } from '../journal/replayJournal.ts';
import { HeartbeatLoopActor, runHeartbeatWork } from './memoryHeartbeats.ts';
import type { MergeJudge, RelationJudge } from './mergeJudge.ts';
import { openMemory } from './openMemory.ts';
import type { MemoryConfig, Situation } from './memoryService.ts';
import type { HeartbeatFact, HeartbeatLoop } from '../../machines/memory/heartbeatMachine.ts';

/** Decisions the memory makes itself: replay must produce them, never copy them. */
const DECIDED = new Set(['ContextEventsSunk', 'ColdDocDistilled', 'MergeProposed', 'MergeDecided', 'RelationReviewed']);

/** Ids in recorded mode: the next id is the one the log says was used. */
class RecordedIds implements IdSource {
  private readonly queue: string[] = [];
  push(id: string): void {
    this.queue.push(id);
  }
  next(): string {
    const id = this.queue.shift();
    if (id === undefined) throw new Error('replay asked for an id the log does not hold');
    return id;
  }
}

const SCENE_DECISIONS = new Set(['SceneCandidateNoted', 'SceneCreated', 'SceneJoined']);

const isDecided = (e: RecordedEvent, previous: RecordedEvent | undefined, afterSituation: boolean): boolean =>
  DECIDED.has(e.type) ||
  (SCENE_DECISIONS.has(e.type) && afterSituation) ||
  (e.type === 'MemoryCommitted' && (e.data as { by: string }).by === 'rule') ||
  (e.type === 'EntitiesMerged' && (e.data as { by: string }).by === 'llm') ||
  // The review loop applies its verdict right after recording it.
  (previous?.type === 'RelationReviewed' && (e.type === 'RelationEdited' || e.type === 'MemoryPurged'));

/** Which recorded events the memory decided itself (scene decisions only after their recorded situation). */
const decidedFlags = (recorded: readonly RecordedEvent[]): boolean[] => {
  let afterSituation = false;
  return recorded.map((e, i) => {
    if (e.type === 'SituationObserved') afterSituation = true;
    else if (!SCENE_DECISIONS.has(e.type)) afterSituation = false;
    return isDecided(e, recorded[i - 1], afterSituation);
  });
};

export type MemoryReplay = Readonly<{ inputs: number; decisions: number; divergence: ReplayDivergence | null }>;

/**
 * The heartbeat loops, re-run on the recorded firing times: a loop starts from its first
 * recorded firing's `since` (the memory's start is not in the log), then must fire at each
 * recorded time, covering the span since its previous firing.
 */
class ReplayedHeartbeats {
  private readonly loops = new Map<HeartbeatLoop, HeartbeatLoopActor>();

  constructor(private readonly intervals: Partial<Record<HeartbeatLoop, number>>) {}

  /** The firing the loop decides at `at`, if it is due. */
  clock(loop: HeartbeatLoop, at: number, firstSince: number): HeartbeatFact['data'] | undefined {
    let actor = this.loops.get(loop);
    if (!actor) {
      actor = new HeartbeatLoopActor(loop, this.intervals, firstSince);
      this.loops.set(loop, actor);
    }
    return actor.clock(at);
  }

  stop(): void {
    for (const actor of this.loops.values()) actor.stop();
  }
}

export const replayMemory = async (
  store: EventStore,
  config?: Partial<MemoryConfig>,
  /** The heartbeat intervals the memory ran with (settings' memory.heartbeats.*Minutes); defaults otherwise. */
  intervals: Partial<Record<HeartbeatLoop, number>> = {},
): Promise<MemoryReplay> => {
  const recorded = await store.readStream(MEMORY_STREAM);
  const dir = mkdtempSync(join(tmpdir(), 'hologram-memory-replay-'));
  const clock = new VirtualClock(0);
  const fresh = SqliteEventStore.open(join(dir, 'events.db'), { catalog: createDefaultCatalog(), clock, ids: new SequentialIds('replay') });
  try {
    const ids = new RecordedIds();
    const memory = await openMemory(fresh, { ids, clock, startAt: 0, ...(config ? { config } : {}) });
    const verdicts = recorded.filter((e) => e.type === 'MergeDecided' || e.type === 'RelationReviewed');
    const judge: MergeJudge = async (a, b) => {
      const d = verdicts.find((e) => e.type === 'MergeDecided' && (e.data as { a: string }).a === a && (e.data as { b: string }).b === b)
        ?.data as { decision: 'merge' | 'keep'; reason: string } | undefined;
      if (!d) throw new Error(`the log holds no verdict on merging '${a}' and '${b}'`);
      return { decision: d.decision, reason: d.reason };
    };
    const reviewer: RelationJudge = async ({ relationId }) => {
      const d = verdicts.find((e) => e.type === 'RelationReviewed' && (e.data as { relationId: string }).relationId === relationId)?.data as
        | { verdict: 'keep' | 'drop'; reason: string }
        | undefined;
      if (!d) throw new Error(`the log holds no review of relation '${relationId}'`);
      return { verdict: d.verdict, reason: d.reason };
    };
    const reviewsRecorded = verdicts.some((e) => e.type === 'RelationReviewed');
    const mergesJudged = verdicts.some((e) => e.type === 'MergeDecided');
    const heartbeats = new ReplayedHeartbeats(intervals);
    const decided = decidedFlags(recorded);
    let inputs = 0;
    for (let i = 0; i < recorded.length; i++) {
      const event = recorded[i]!;
      if (decided[i]) continue;
      inputs++;
      const d = event.data as Record<string, unknown>;
      if (event.type === 'ContextEventAppended') {
        const e = d.event as ContextEventData;
        ids.push(e.eventId);
        await memory.service.observe(d.scope as string, {
          role: e.role,
          ...(e.speaker ? { speaker: e.speaker } : {}),
          text: e.text,
          at: e.at,
          ...(e.cites ? { cites: e.cites } : {}),
          ...(e.blocks ? { blocks: e.blocks } : {}),
        });
      } else if (event.type === 'SituationObserved') {
        const { situation, declaredKey, eventId } = d as { situation: Situation; declaredKey?: string; eventId?: string };
        await memory.service.observeScene({ ...situation, ...(declaredKey ? { declaredKey } : {}) }, eventId);
      } else if (event.type === 'HeartbeatFired') {
        // The recorded time is the input; whether the loop was due then, and since when, the machine decides again.
        const { loop, at, since } = d as { loop: HeartbeatLoop; at: number; since?: number };
        const fired = heartbeats.clock(loop, at, since ?? at);
        if (fired) {
          await fresh.append(MEMORY_STREAM, [{ type: 'HeartbeatFired', data: fired, at: event.at }]);
          await runHeartbeatWork(
            memory.service,
            loop,
            fired.since,
            at,
            mergesJudged ? judge : undefined,
            reviewsRecorded ? reviewer : undefined,
          );
        }
      } else {
        await memory.service.record([bareEvent(event)], event.at);
      }
    }
    memory.heartbeats.stop();
    heartbeats.stop();
    const replayed = await fresh.readStream(MEMORY_STREAM);
    const decisions = decided.filter(Boolean).length;
    const divergence = firstDifference(recorded, replayed.map(bareEvent));
    return { inputs, decisions, divergence };
  } finally {
    await fresh.close();
    rmSync(dir, { recursive: true, force: true });
  }
};
