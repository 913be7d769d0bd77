/**
 * The memory under test: every turn enters the kernel's memory as a context event of the
 * conversation's scope at the session's time, the heartbeats run on that virtual time (so
 * context sinks to cold docs and idle docs are distilled into the graph as they would over
 * those months), and questions go through the same recall path the agent uses.
 */
import { existsSync, mkdirSync, mkdtempSync, renameSync, rmSync, statSync } from 'node:fs';
import { execFile } from 'node:child_process';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { isDeepStrictEqual, promisify } from 'node:util';
import { SqliteEventStore } from '../../adapters/sqlite/sqliteEventStore.ts';
import { createDefaultCatalog, SequentialIds, VirtualClock } from '../../events/index.ts';
import { EVENT_LOG_FILE, INDEX_SNAPSHOT_FILE } from '../../actors/modules/config.ts';
import { type MemoryConfig, openMemory, type OpenMemory } from '../../actors/memory/openMemory.ts';
import { recall, type RecallBoosts } from '../../projections/index.ts';
import type { IndexStartTimes } from './indexStartChild.ts';
import type { RecallSystem, RecalledItem } from './recallSystem.ts';

const run = promisify(execFile);
const PACKAGE_ROOT = fileURLToPath(new URL('../../', import.meta.url));
const INDEX_START_CHILD = fileURLToPath(new URL('./indexStartChild.ts', import.meta.url));
const EARLIER_SNAPSHOT = 'earlier-index.snapshot';

/**
 * The memory as a recall system; what a start would spend rebuilding its index from the log and
 * read models now; and the same recall with other boosts (the leave-one-out runner varies them).
 */
export type MemoryRecallSystem = RecallSystem &
  Readonly<{
    /**
     * ms to rebuild the index from the log and read models, to read it back from a snapshot
     * written now, and (after `saveEarlierSnapshot`) to read back the earlier one and catch it up,
     * in a process of its own as a start does (see indexStartChild.ts); the snapshot's size.
     */
    indexStart(): Promise<IndexStartTimes & { snapshotBytes: number }>;
    /** Writes the snapshot an idle spell would leave now; the next `indexStart` also starts from it, after a crash. */
    saveEarlierSnapshot(): Promise<void>;
    recallWith(question: string, k: number, boosts: RecallBoosts): Promise<readonly RecalledItem[]>;
    /**
     * Ends the system and leaves what it said as a daemon's data dir: `dataDir/events.db` (the
     * log and its read models) and the index snapshot a clean stop would have left beside it.
     */
    closeInto(dataDir: string): Promise<void>;
  }>;

const asRecalled = (hits: readonly { text: string; cites: readonly string[]; score: number }[]): RecalledItem[] =>
  hits.map((hit) => ({ text: hit.text, cites: hit.cites, score: hit.score }));

/** `config`: the memory's settings where they differ from the defaults (the leave-one-out runner varies them). */
export const createMemoryRecallSystem = async (conversation: string, config: Partial<MemoryConfig> = {}): Promise<MemoryRecallSystem> => {
  const dir = mkdtempSync(join(tmpdir(), 'hologram-locomo-'));
  const clock = new VirtualClock(0);
  const store = SqliteEventStore.open(join(dir, EVENT_LOG_FILE), { catalog: createDefaultCatalog(), clock, ids: new SequentialIds('e') });
  let memory: OpenMemory | undefined;
  const scope = `locomo:${conversation}`;
  return {
    name: 'hologram memory (L1 context → L2 cold docs → L3 graph; BM25 with neighbour words and WordNet terms, person and time focus; heartbeats on session time)',
    async ingest(turn) {
      memory ??= await openMemory(store, { ids: new SequentialIds('m'), clock, startAt: turn.at, config });
      clock.set(Math.max(clock.now(), turn.at));
      const text = turn.imageCaption ? `${turn.text} [image: ${turn.imageCaption}]` : turn.text;
      await memory.tick(turn.at);
      await memory.observe(
        scope,
        { role: 'user', speaker: turn.speaker, text, at: turn.at, cites: [turn.diaId] },
        { channel: 'locomo', peer: turn.speaker },
      );
    },
    async indexStart() {
      if (!memory) return { rebuildMs: 0, snapshotMs: 0, snapshotBytes: 0 };
      const path = join(dir, 'index.snapshot');
      const earlier = join(dir, EARLIER_SNAPSHOT);
      // Written once the memory is settled: the child reads the log and read models as they are now.
      await memory.saveIndexSnapshot(path);
      const configJson = JSON.stringify(config);
      if (!isDeepStrictEqual(JSON.parse(configJson), config)) throw new Error('indexStart: the memory config does not survive JSON');
      const args = [INDEX_START_CHILD, join(dir, EVENT_LOG_FILE), path, configJson, ...(existsSync(earlier) ? [earlier] : [])];
      const { stdout } = await run(process.execPath, ['--import', 'tsx', ...args], { cwd: PACKAGE_ROOT, encoding: 'utf8' });
      rmSync(earlier, { force: true });
      const times = JSON.parse(stdout) as IndexStartTimes;
      return { ...times, snapshotBytes: statSync(path).size };
    },
    async saveEarlierSnapshot() {
      await memory?.saveIndexSnapshot(join(dir, EARLIER_SNAPSHOT));
    },
    async finishIngest(at) {
      await memory?.tick(at);
    },
    async recall(question, k) {
      return asRecalled((await memory?.recall(question, k, scope)) ?? []);
    },
    // The recall path memory.recall takes (no situation, no dense space), with the boosts given.
    async recallWith(question, k, boosts) {
      if (!memory) return [];
      return asRecalled(recall(memory.index, memory.readModels, { query: question, k, scope, now: clock.now(), boosts }));
    },
    async close() {
      await memory?.settled();
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    },
    async closeInto(dataDir) {
      mkdirSync(dataDir, { recursive: true, mode: 0o700 });
      await memory?.saveIndexSnapshot(join(dataDir, INDEX_SNAPSHOT_FILE));
      await memory?.settled();
      await store.close();
      renameSync(join(dir, EVENT_LOG_FILE), join(dataDir, EVENT_LOG_FILE));
      rmSync(dir, { recursive: true, force: true });
    },
  };
};
