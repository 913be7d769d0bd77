/**
 * Replaying the memory re-decides what sank, what was archived, which rule facts were read,
 * which merges were proposed and which scene each input joined, from the recorded inputs; a log
 * whose decision differs from what this build decides is reported at that event's seq.
 */
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { SqliteEventStore } from '../../adapters/sqlite/sqliteEventStore.ts';
import {
  createDefaultCatalog,
  InMemoryEventStore,
  MEMORY_STREAM,
  SequentialIds,
  VirtualClock,
  type NewHologramEvent,
} from '../../events/index.ts';
import { openMemory } from '../../actors/memory/openMemory.ts';
import { replayMemory } from '../../actors/memory/replayMemory.ts';
import { useOpenStores, useTempDir } from '../support/tempDir.ts';

const tempDir = useTempDir();
const stores = useOpenStores();

const HOUR = 3_600_000;
const CONFIG = { prune: { protectRecent: 3, keepTopK: 1, budgetTokens: 10_000 } };

/** A memory on a fresh log of its own, on a virtual clock. */
const openRecordedMemory = async () => {
  const clock = new VirtualClock(1_700_000_000_000);
  const store = SqliteEventStore.open(join(tempDir(), 'events.db'), {
    catalog: createDefaultCatalog(),
    clock,
    ids: new SequentialIds('e'),
  });
  stores.push(store);
  const memory = await openMemory(store, { ids: new SequentialIds('m'), clock, startAt: clock.now(), config: CONFIG });
  return { clock, store, memory };
};

/** A session: talk, recall from cold context, let days pass so the heartbeats archive, distil rules and propose merges. */
const recordSession = async () => {
  const { clock, store, memory } = await openRecordedMemory();
  const lines = [
    'My name is Ada Lovelace',
    'I live in London',
    'I like mathematics',
    'The engine needs cards',
    'ada lovelace wrote the notes',
    'Tea at four',
    'Babbage visited',
    'I like poetry',
    'The weather is grey',
    'Where are the engine cards?',
  ];
  for (const [i, text] of lines.entries()) {
    const at = clock.now() + (i === 6 ? 20 * HOUR : 15 * 60_000);
    clock.set(at);
    await memory.tick(at);
    await memory.observe('chat:ada', { role: 'user', speaker: 'Ada', text, at, cites: [`D1:${i + 1}`] }, { channel: 'cli', peer: 'ada' });
  }
  const [hit] = await memory.peekCold('engine cards', 1, clock.now());
  if (hit) await memory.restoreCold(hit.id.slice(4), clock.now());
  // What a tool wrote: two spellings of one name, for the merge loop to propose.
  const triple = (relationId: string, subject: string) => ({ relationId, subject, predicate: 'visited', object: 'London', confidence: 1 });
  await memory.record(
    [
      {
        type: 'MemoryCommitted',
        data: { triples: [triple('t1', 'Charles Babbage'), triple('t2', 'Charles Babbage.')], by: 'tool', at: clock.now() },
      },
    ],
    clock.now(),
  );
  clock.set(clock.now() + 80 * HOUR);
  await memory.tick(clock.now());
  await memory.settled();
  return store;
};

describe('memory replay', () => {
  it('re-decides every sink, archive, rule fact and merge proposal of a session and finds them equal', async () => {
    const store = await recordSession();
    const types = (await store.readStream(MEMORY_STREAM)).map((e) => e.type);
    expect(types).toEqual(
      expect.arrayContaining(['ContextEventsSunk', 'ColdDocDistilled', 'MergeProposed', 'ContextEventsRestored', 'HeartbeatFired']),
    );
    const replay = await replayMemory(store, CONFIG);
    expect(replay.divergence).toBeNull();
    expect(replay.decisions).toBeGreaterThan(5);
  });

  it('decides with the bounds the boot recorded, whatever the settings say when it is replayed', async () => {
    const store = await recordSession();
    const start = (await store.readStream(MEMORY_STREAM)).find(
      (e) => e.type === 'InputDelivered' && (e.data.message as { type: string }).type === 'memory.start',
    )!;
    expect(((start.data as { message?: { run?: unknown } }).message as { run?: unknown }).run).toMatchObject({ prune: CONFIG.prune });
    const edited = { prune: { protectRecent: 10, keepTopK: 20, budgetTokens: 24_000 } };
    const replay = await replayMemory(store, edited, { rules: 1, distill: 1 });
    expect(replay.divergence).toBeNull();
  });

  it("re-decides each input's scene from its recorded situation, and reports a scene decision it would not make", async () => {
    const store = await recordSession();
    const events = await store.readStream(MEMORY_STREAM);
    expect(events.filter((e) => e.type === 'ContextEventAppended' && e.data.situation)).toHaveLength(10);
    const joined = events.find((e) => e.type === 'SceneJoined')!;
    const copy = async (change: (e: (typeof events)[number]) => unknown, keep = (_: (typeof events)[number]) => true) => {
      const log = new InMemoryEventStore(createDefaultCatalog(), new VirtualClock(0), new SequentialIds('t'));
      for (const e of events.filter(keep))
        await log.append(MEMORY_STREAM, [{ type: e.type, data: change(e), at: e.at } as NewHologramEvent]);
      return log;
    };
    const tampered = await copy((e) => (e.seq === joined.seq ? { ...(e.data as object), similarity: 0.51 } : e.data));
    const replay = await replayMemory(tampered, CONFIG);
    expect(replay.divergence).toMatchObject({
      expected: { type: 'SceneJoined', data: { similarity: 0.51 } },
      actual: { type: 'SceneJoined' },
    });
    expect(replay.divergence!.seq).toBe(events.indexOf(joined) + 1);
    // A log an earlier build wrote (no memory journal began): its decisions are taken as recorded.
    const older = await copy(
      (e) => (e.seq === joined.seq ? { ...(e.data as object), similarity: 0.51 } : e.data),
      (e) => !(e.type === 'InputDelivered' && (e.data.message as { type: string }).type === 'memory.start'),
    );
    const applied = await replayMemory(older, CONFIG);
    expect(applied.divergence).toBeNull();
    expect(applied.earlier).toBe(events.length - 1);
  });

  it('re-decides when each heartbeat loop fires: a firing before the loop was due is reported, and the recorded intervals decide', async () => {
    const store = await recordSession();
    const events = await store.readStream(MEMORY_STREAM);
    const rules = events.filter((e) => e.type === 'HeartbeatFired' && (e.data as { loop: string }).loop === 'rules');
    expect(rules.length).toBeGreaterThan(2);
    const second = rules[1]!;
    const { since } = second.data as { since: number };
    // A log in which the rule loop fired one minute after its previous firing (its interval is ten).
    const tampered = new InMemoryEventStore(createDefaultCatalog(), new VirtualClock(0), new SequentialIds('t'));
    for (const e of events) {
      const data = e.seq === second.seq ? { ...(e.data as object), at: since + 60_000 } : e.data;
      await tampered.append(MEMORY_STREAM, [{ type: e.type, data, at: e.at } as NewHologramEvent]);
    }
    const replay = await replayMemory(tampered, CONFIG);
    expect(replay.divergence).toMatchObject({ expected: { type: 'HeartbeatFired', data: { loop: 'rules', at: since + 60_000 } } });
    expect(replay.divergence!.seq).toBe(events.indexOf(second) + 1);
    // The intervals the boot recorded decide, not the replayer's settings...
    expect((await replayMemory(store, CONFIG, { rules: 3_600_000 })).divergence).toBeNull();
    // ...so a boot that says it ran with an hourly rule loop cannot have fired it every ten minutes.
    const hourly = new InMemoryEventStore(createDefaultCatalog(), new VirtualClock(0), new SequentialIds('t'));
    for (const e of events) {
      const message = (e.data as { message?: unknown }).message as { type?: string; run?: { intervals: object } } | undefined;
      const data =
        message?.type === 'memory.start'
          ? {
              ...(e.data as object),
              message: { ...message, run: { ...message.run, intervals: { ...message.run!.intervals, rules: 3_600_000 } } },
            }
          : e.data;
      await hourly.append(MEMORY_STREAM, [{ type: e.type, data, at: e.at } as NewHologramEvent]);
    }
    expect((await replayMemory(hourly, CONFIG)).divergence).toMatchObject({
      expected: { type: 'HeartbeatFired', data: { loop: 'rules' } },
    });
  });

  it('reports the first decision this build would not make, at its seq', async () => {
    const store = await recordSession();
    const events = await store.readStream(MEMORY_STREAM);
    const sunk = events.find((e) => e.type === 'ContextEventsSunk')!;
    // A log written by a build that sank a different event: same inputs, another decision.
    const tampered = new InMemoryEventStore(createDefaultCatalog(), new VirtualClock(0), new SequentialIds('t'));
    for (const e of events) {
      const data = e.seq === sunk.seq ? { ...(e.data as object), reason: 'a different rule' } : e.data;
      await tampered.append(MEMORY_STREAM, [{ type: e.type, data, at: e.at } as NewHologramEvent]);
    }
    const replay = await replayMemory(tampered, CONFIG);
    expect(replay.divergence).toMatchObject({
      expected: { type: 'ContextEventsSunk', data: { reason: 'a different rule' } },
      actual: { type: 'ContextEventsSunk' },
    });
    expect(replay.divergence!.seq).toBe(events.indexOf(sunk) + 1);
  });
});

describe('memory replay beside a running daemon', () => {
  /** A memory that heard `count` utterances, a minute apart. */
  const recordUtterances = async (count: number) => {
    const { clock, store, memory } = await openRecordedMemory();
    for (let i = 0; i < count; i++) {
      clock.set(clock.now() + 60_000);
      await memory.observe(
        'chat:ada',
        { role: 'user', speaker: 'Ada', text: `note ${i} about the engine`, at: clock.now() },
        { channel: 'cli', peer: 'ada' },
      );
    }
    await memory.settled();
    return store;
  };

  it('gives the event loop a turn every 32 messages and re-decides the same, and stops at the next turn once called off', async () => {
    const store = await recordUtterances(100);
    const alone = await replayMemory(store, CONFIG);
    expect(alone.divergence).toBeNull();
    let turns = 0;
    const beside = await replayMemory(store, CONFIG, {}, undefined, { pause: async () => void turns++ });
    expect(turns).toBe(Math.floor(alone.messages / 32));
    expect(turns).toBeGreaterThanOrEqual(3);
    expect({ ...beside, loops: undefined }).toEqual({ ...alone, loops: undefined });

    const calledOff = new AbortController();
    let taken = 0;
    const stopped = replayMemory(store, CONFIG, {}, undefined, {
      signal: calledOff.signal,
      pause: async () => {
        if (++taken === 2) calledOff.abort(new Error('the page went away'));
      },
    });
    await expect(stopped).rejects.toThrow('the page went away');
    expect(taken).toBe(2);
  });
});
