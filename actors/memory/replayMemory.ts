/**
 * Replays the memory's journal: a fresh memory on a scratch log gets every recorded message
 * again (each utterance as it entered, each heartbeat firing, what tools decided, each peek and
 * restore, each model verdict, each start), and the decisions it makes for each must equal the
 * decisions recorded after it, byte for byte. Nothing is inferred: the journal says which event
 * is a message. What an earlier build recorded before this journal began (before the first
 * `memory.start`) is applied as recorded and not re-decided.
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
  type Recorded,
} from '../../events/index.ts';
import type { HeartbeatLoop } from '../../machines/memory/index.ts';
import { memoryProjections } from '../../projections/index.ts';
import { firstDifference, messageOf, type ReplayDivergence } from '../journal/replayJournal.ts';
import { ProjectionRunner } from '../projections/projectionRunner.ts';
import { type BackgroundWork, takeTurn } from '../replay/replayer.ts';
import { SqliteReadModelTx } from '../projections/sqliteReadModelTx.ts';
import { MEMORY_INPUT_TYPES, MemoryActor, type MemoryMessage } from './memoryActor.ts';
import { buildMemoryIndex, memoryConfigOf, type MemoryConfig } from './openMemory.ts';

export type MemoryReplay = Readonly<{
  messages: number;
  decisions: number;
  earlier: number;
  divergence: ReplayDivergence | null;
  /** The type of the last message re-delivered (null before the first). */
  lastMessage: string | null;
  /** The heartbeat loops' machines after the replay, and how often each fired in it. */
  loops: ReturnType<MemoryActor['loopStates']>;
  fired: Readonly<Partial<Record<HeartbeatLoop, number>>>;
}>;

/** Messages re-decided between two turns of a running daemon's event loop (a few ms of work). */
const MESSAGES_PER_TURN = 32;

const isStart = (event: Recorded): boolean =>
  event.type === 'InputDelivered' && (event.data.message as { type?: string } | undefined)?.type === 'memory.start';

export const replayMemory = async (
  store: EventStore,
  config?: Partial<MemoryConfig>,
  /** The heartbeat intervals the memory ran with (settings' memory.heartbeats.*Minutes); defaults otherwise. */
  intervals: Partial<Record<HeartbeatLoop, number>> = {},
  /** Re-deliver only what the log held at this seq (time travel). */
  untilSeq = Number.MAX_SAFE_INTEGER,
  /** Beside a running daemon: a turn of its event loop every MESSAGES_PER_TURN messages re-decided. */
  work: BackgroundWork = {},
): Promise<MemoryReplay> => {
  const recorded = (await store.readStream(MEMORY_STREAM)).filter((e) => e.seq <= untilSeq);
  const begin = recorded.findIndex(isStart);
  const start = begin < 0 ? recorded.length : begin;
  const dir = mkdtempSync(join(tmpdir(), 'hologram-memory-replay-'));
  const clock = new VirtualClock(0);
  const scratch = SqliteEventStore.open(join(dir, 'events.db'), {
    catalog: createDefaultCatalog(),
    clock,
    ids: new SequentialIds('replay'),
  });
  try {
    const runner = new ProjectionRunner(scratch.db, memoryProjections(), { trail: false });
    runner.prepare();
    runner.attachInline(scratch);
    for (let i = 0; i < start; i += 500) {
      await takeTurn(work);
      await scratch.append(
        MEMORY_STREAM,
        recorded.slice(i, Math.min(start, i + 500)).map((e) => ({ ...bareEvent(e), at: e.at })),
      );
    }
    const tx = new SqliteReadModelTx(scratch.db);
    const settings = memoryConfigOf(config);
    const { index } = await buildMemoryIndex(scratch, tx, settings);
    const memory = new MemoryActor({ store: scratch, tx, index, config: settings, intervals, now: () => 0 });
    let messages = 0;
    let decisions = 0;
    let divergence: ReplayDivergence | null = null;
    let lastMessage: string | null = null;
    const fired: Partial<Record<HeartbeatLoop, number>> = {};
    for (let i = start; i < recorded.length && !divergence; ) {
      if (messages % MESSAGES_PER_TURN === MESSAGES_PER_TURN - 1) await takeTurn(work);
      const message = messageOf(recorded[i]!, MEMORY_INPUT_TYPES) as MemoryMessage | undefined;
      if (!message) {
        const { type, data } = recorded[i]!;
        divergence = { seq: recorded[i]!.seq, expected: { type, data }, actual: null };
        break;
      }
      let j = i + 1;
      while (j < recorded.length && !messageOf(recorded[j]!, MEMORY_INPUT_TYPES)) j++;
      const facts = recorded.slice(i + 1, j);
      messages++;
      decisions += facts.length;
      lastMessage = message.type;
      if (message.type === 'memory.heartbeat') fired[message.loop] = (fired[message.loop] ?? 0) + 1;
      const produced = await memory
        .deliver(message)
        .catch((error: unknown) => [{ type: 'DecisionFailed', data: (error as Error).message }]);
      divergence = firstDifference(facts, produced, recorded[j - 1]!.seq);
      i = j;
    }
    return { messages, decisions, earlier: start, divergence, lastMessage, loops: memory.loopStates(), fired };
  } finally {
    await scratch.close();
    rmSync(dir, { recursive: true, force: true });
  }
};
