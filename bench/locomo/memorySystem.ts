/**
 * The memory under test: every turn enters the kernel's memory as a context event of the
 * conversation's scope at the session's time, the heartbeats run on that virtual time (so
 * context sinks to cold docs and idle docs are distilled into the graph as they would over
 * those months), and questions go through the same recall path the agent uses.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SqliteEventStore } from '../../adapters/sqlite/sqliteEventStore.ts';
import { createDefaultCatalog, SequentialIds, VirtualClock } from '../../events/index.ts';
import { buildMemoryIndex, memoryConfigOf, openMemory, type OpenMemory } from '../../actors/memory/openMemory.ts';
import type { RecallSystem } from './recallSystem.ts';

/** The memory as a recall system, and what a start would spend rebuilding its index from the log and read models now. */
export type MemoryRecallSystem = RecallSystem & Readonly<{ indexRebuildMs(): Promise<number> }>;

export const createMemoryRecallSystem = async (conversation: string): Promise<MemoryRecallSystem> => {
  const dir = mkdtempSync(join(tmpdir(), 'hologram-locomo-'));
  const clock = new VirtualClock(0);
  const store = SqliteEventStore.open(join(dir, 'events.db'), { catalog: createDefaultCatalog(), clock, ids: new SequentialIds('e') });
  let memory: OpenMemory | undefined;
  const scope = `locomo:${conversation}`;
  return {
    name: 'hologram memory (L1 context → L2 cold docs → L3 graph; BM25 with neighbour words and WordNet terms, person and time focus; heartbeats on session time)',
    async ingest(turn) {
      memory ??= await openMemory(store, { ids: new SequentialIds('m'), clock, startAt: turn.at });
      clock.set(Math.max(clock.now(), turn.at));
      const text = turn.imageCaption ? `${turn.text} [image: ${turn.imageCaption}]` : turn.text;
      await memory.tick(turn.at);
      await memory.observe(
        scope,
        { role: 'user', speaker: turn.speaker, text, at: turn.at, cites: [turn.diaId] },
        { channel: 'locomo', peer: turn.speaker },
      );
    },
    async indexRebuildMs() {
      if (!memory) return 0;
      const start = performance.now();
      await buildMemoryIndex(store, memory.readModels, memoryConfigOf());
      return performance.now() - start;
    },
    async finishIngest(at) {
      await memory?.tick(at);
    },
    async recall(question, k) {
      return ((await memory?.recall(question, k, scope)) ?? []).map((hit) => ({
        text: hit.text,
        cites: hit.cites,
        score: hit.score,
      }));
    },
    async close() {
      await memory?.settled();
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
};
