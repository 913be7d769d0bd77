/**
 * The memory as a kernel module: the journaled memory over the inline memory read models, its
 * heartbeat loops fired by a timer armed for the time the next one is due (each firing is a
 * recorded message), and its judges asking the `llm` facility.
 * Settings: `memory.protectRecent`, `memory.keepTopK`, `memory.budgetTokens`,
 * `memory.heartbeats.{distill,archive,merge,review,rules}Minutes`, `memory.lexicon` ("wordnet",
 * the default, or "none"), and `memory.embedding.onnxDir` (a model directory: recall becomes
 * dense + keyword; vectors are cached in `vectors.db`, which can be deleted at any time).
 */
import type { InspectionEvent } from 'xstate';
import type { Timers } from '../../events/index.ts';
import { DEFAULT_HEARTBEAT_INTERVALS_MS, type HeartbeatLoop } from '../../machines/memory/heartbeatMachine.ts';
import { DEFAULT_PRUNE_CONFIG } from '../../machines/memory/contextPruning.ts';
import { computeTokenBudget, TYPICAL_FIXED_TOKENS } from '../../machines/turn/index.ts';
import { Facility, INSPECT_FACILITY } from '../kernel/facilities.ts';
import type { KernelModule } from '../kernel/kernelModule.ts';
import { createMemory, type IndexSnapshotPlace, type Memory } from '../memory/openMemory.ts';
import { SqliteReadModelTx } from '../projections/sqliteReadModelTx.ts';
import { llmMergeJudge, llmRelationJudge } from '../memory/mergeJudge.ts';
import { DEFAULT_MEMORY_CONFIG, MEMORY_LEXICONS, type DenseRecall, type MemoryConfig, type MemoryLexicon } from '../memory/openMemory.ts';
import { VectorCache } from '../../adapters/embeddings/vectorCache.ts';
import { openDatabase, type SqliteDatabase } from '../../adapters/sqlite/openDatabase.ts';
import { join, resolve } from 'node:path';
import { INDEX_SNAPSHOT_FILE, InvalidSettings, setting, type Settings, VECTOR_CACHE_FILE } from './config.ts';

/**
 * The memory settings of settings.json (the daemon and `homed replay --verify` read the same).
 * Unless `memory.budgetTokens` is set, L1 holds what one prompt of the model's window can carry
 * (`contextWindow`, else the fallback window), so nothing stays in L1 that the turn cannot send.
 */
export const memoryConfigFrom = (settings: Settings, contextWindow?: number): Partial<MemoryConfig> => {
  const lexicon = setting<unknown>(settings, 'memory.lexicon', DEFAULT_MEMORY_CONFIG.lexicon);
  if (!MEMORY_LEXICONS.includes(lexicon as MemoryLexicon)) {
    throw new InvalidSettings(
      `memory.lexicon is ${JSON.stringify(lexicon)}; use one of ${MEMORY_LEXICONS.map((l) => `"${l}"`).join(', ')} in settings.json`,
    );
  }
  return {
    prune: {
      protectRecent: setting(settings, 'memory.protectRecent', DEFAULT_PRUNE_CONFIG.protectRecent),
      keepTopK: setting(settings, 'memory.keepTopK', DEFAULT_PRUNE_CONFIG.keepTopK),
      budgetTokens: setting(settings, 'memory.budgetTokens', computeTokenBudget(contextWindow, TYPICAL_FIXED_TOKENS).contextEvents),
    },
    lexicon: lexicon as MemoryLexicon,
  };
};
/** Each heartbeat loop's interval from `memory.heartbeats.<loop>Minutes` (the daemon and replay read the same). */
export const heartbeatIntervalsFrom = (settings: Settings): Record<HeartbeatLoop, number> =>
  Object.fromEntries(
    (Object.keys(DEFAULT_HEARTBEAT_INTERVALS_MS) as HeartbeatLoop[]).map((loop) => [
      loop,
      setting(settings, `memory.heartbeats.${loop}Minutes`, DEFAULT_HEARTBEAT_INTERVALS_MS[loop] / 60_000) * 60_000,
    ]),
  ) as Record<HeartbeatLoop, number>;

export const memoryModule = (): KernelModule => {
  let timer: unknown;
  let stopped = false;
  let timersOf: Timers | undefined;
  let memory: Memory | undefined;
  let vectorDb: SqliteDatabase | undefined;
  let snapshot: IndexSnapshotPlace | undefined;
  return {
    name: 'memory',
    requires: [
      Facility.eventLog,
      Facility.clock,
      Facility.timers,
      Facility.ids,
      Facility.config,
      Facility.dataDir,
      Facility.projections,
      Facility.llm,
    ],
    provides: [Facility.memory],
    async init(context) {
      const store = context.require(Facility.eventLog);
      const clock = context.require(Facility.clock);
      const watching = context.optional(INSPECT_FACILITY);
      // The loops take a function; the relay of --inspect may be an observer.
      const inspect = typeof watching === 'function' ? watching : watching ? (event: InspectionEvent) => watching.next?.(event) : undefined;
      const settings = context.require(Facility.config);
      const dataDir = context.require(Facility.dataDir);
      snapshot = { path: join(dataDir, INDEX_SNAPSHOT_FILE), log: (line) => context.log(line) };
      const intervals = heartbeatIntervalsFrom(settings);
      const onnxDir = setting<string | undefined>(settings, 'memory.embedding.onnxDir', undefined);
      let dense: DenseRecall | undefined;
      if (onnxDir) {
        const { OnnxEmbeddingProvider } = await import('../../adapters/embeddings/onnx/index.ts');
        const provider = await OnnxEmbeddingProvider.load(resolve(dataDir, onnxDir));
        vectorDb = openDatabase(join(dataDir, VECTOR_CACHE_FILE), { durability: 'rebuildable' });
        const cache = new VectorCache(vectorDb);
        cache.prune(provider.fingerprint);
        dense = { provider, cache };
        context.log(`memory: dense recall with ${provider.fingerprint} (${provider.dimensions}-d), vectors cached in ${VECTOR_CACHE_FILE}`);
      }
      const llm = context.require(Facility.llm);
      memory = await createMemory(store, new SqliteReadModelTx(store.db), {
        ...('chain' in llm
          ? { mergeJudge: llmMergeJudge(llm.chain, llm.model), relationJudge: llmRelationJudge(llm.chain, llm.model) }
          : {}),
        ...(dense ? { dense } : {}),
        ids: context.require(Facility.ids),
        clock,
        log: (line) => context.log(line),
        startAt: clock.now(),
        intervals,
        ...(inspect ? { inspect } : {}),
        indexSnapshot: snapshot,
        stopping: context.stopping,
        config: memoryConfigFrom(settings, 'chain' in llm ? llm.chain.primary()?.contextWindow : undefined),
      });
      // The next firing is a timer at the time the loops are due; each firing is a journaled message.
      const timers = context.require(Facility.timers);
      timersOf = timers;
      const arm = () => {
        const due = memory!.nextDueAt();
        if (due === null || stopped) return;
        timer = timers.setTimer(() => {
          timer = undefined;
          memory!
            .tick(clock.now())
            .then(arm)
            .catch((error: unknown) => context.fail(error));
        }, due - clock.now());
      };
      arm();
      context.provide(Facility.memory, memory);
    },
    async stop() {
      stopped = true;
      if (timer !== undefined) timersOf?.clearTimer(timer);
      await memory?.settled();
      // The next start reads the index back instead of rebuilding it; without the file it rebuilds, so a failure is only said.
      if (memory && snapshot) {
        try {
          await memory.saveIndexSnapshot(snapshot.path);
        } catch (error) {
          snapshot.log?.(`memory: the index snapshot was not written (${(error as Error).message}); the next start rebuilds the index`);
        }
      }
      vectorDb?.close();
    },
  };
};
