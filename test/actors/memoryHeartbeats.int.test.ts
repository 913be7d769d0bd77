/**
 * The heartbeat loops across restarts: a loop resumes from its last recorded firing, and a
 * firing covers everything since the previous one (or since the start), whatever the interval.
 */
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { SqliteEventStore } from '../../adapters/sqlite/sqliteEventStore.ts';
import { createDefaultCatalog, SequentialIds, VirtualClock } from '../../events/index.ts';
import { HEARTBEAT_LOOPS } from '../../actors/memory/heartbeatLoops.ts';
import { openMemory, type OpenMemory } from '../../actors/memory/openMemory.ts';
import { useOpenStores, useTempDir } from '../support/tempDir.ts';

const tempDir = useTempDir();
const stores = useOpenStores();

const SCOPE = 'chat:ada';
const START = Date.UTC(2023, 4, 1, 12);

describe('memory heartbeats', () => {
  it('distils what was said before a restart: the rule loop resumes from its last firing, and its first firing covers everything since the start', async () => {
    const path = join(tempDir(), 'events.db');
    const MIN = 60_000;
    const facts = async (memory: OpenMemory) =>
      memory.readModels
        .all<{ object: string }>("SELECT object FROM memory_graph_relations WHERE predicate != 'said' ORDER BY object")
        .map((r) => r.object);
    // An hour between firings: longer than the default 10 minutes the first firing used to look back.
    const first = await openMemory(
      stores[
        stores.push(
          SqliteEventStore.open(path, { catalog: createDefaultCatalog(), clock: new VirtualClock(START), ids: new SequentialIds('e') }),
        ) - 1
      ]!,
      {
        ids: new SequentialIds('m'),
        clock: new VirtualClock(START),
        startAt: START,
        intervals: { rules: 60 * MIN },
      },
    );
    await first.observe(SCOPE, { role: 'user', speaker: 'Ada', text: 'I live in Lisbon', at: START + 5 * MIN, cites: ['D1:1'] });
    await first.tick(START + 60 * MIN);
    await first.observe(SCOPE, { role: 'user', speaker: 'Ada', text: 'I like sailing', at: START + 65 * MIN, cites: ['D1:2'] });
    expect(await facts(first)).toEqual(['lisbon']);
    await first.settled();
    await stores.pop()!.close();
    // The daemon comes back two hours later: the loop is overdue from its last firing and reads from there.
    const second = await openMemory(
      stores[
        stores.push(
          SqliteEventStore.open(path, { catalog: createDefaultCatalog(), clock: new VirtualClock(START), ids: new SequentialIds('e2') }),
        ) - 1
      ]!,
      {
        ids: new SequentialIds('m2'),
        clock: new VirtualClock(START + 180 * MIN),
        startAt: START + 180 * MIN,
        intervals: { rules: 60 * MIN },
      },
    );
    expect(await second.tick(START + 181 * MIN)).toContain('rules');
    expect(await facts(second)).toEqual(['lisbon', 'sailing']);
    await second.settled();
  });

  it('runs its loops again after the clock was set back: a restart before the last firing starts over, and so does a reading behind it', async () => {
    const path = join(tempDir(), 'events.db');
    const MIN = 60_000;
    const DAY = 24 * 60 * MIN;
    const HOURLY = { rules: 60 * MIN, distill: 60 * MIN, archive: 60 * MIN, merge: 60 * MIN, review: 60 * MIN };
    const open = (at: number, tag: string) => {
      const store = SqliteEventStore.open(path, {
        catalog: createDefaultCatalog(),
        clock: new VirtualClock(at),
        ids: new SequentialIds(`e${tag}`),
      });
      stores.push(store);
      return openMemory(store, { ids: new SequentialIds(`m${tag}`), clock: new VirtualClock(at), startAt: at, intervals: HOURLY });
    };
    // The machine's clock ran a year ahead: the loop fired then.
    const ahead = await open(START + 365 * DAY, 'a');
    expect(await ahead.tick(START + 365 * DAY + 60 * MIN)).toContain('rules');
    await ahead.settled();
    await stores.pop()!.close();
    const facts = async (memory: OpenMemory) =>
      memory.readModels
        .all<{ object: string }>("SELECT object FROM memory_graph_relations WHERE predicate != 'said' ORDER BY object")
        .map((r) => r.object);
    // Set right, the daemon starts again: the loop is due one interval after the start, not a year on.
    const second = await open(START, 'b');
    expect(second.nextDueAt()).toBe(START + 60 * MIN);
    await second.observe(SCOPE, { role: 'user', speaker: 'Ada', text: 'I live in Lisbon', at: START + 5 * MIN, cites: ['D1:1'] });
    // Stopped before a loop fired: the next start resumes from where this one started over, so Lisbon is not skipped.
    await second.settled();
    await stores.pop()!.close();
    const third = await open(START + 20 * MIN, 'c');
    expect(third.nextDueAt()).toBe(START + 60 * MIN);
    expect(await third.tick(START + 60 * MIN)).toEqual(['rules', 'distill', 'archive', 'merge', 'review']);
    expect(await facts(third)).toEqual(['lisbon']);
    // A reading behind the last firing starts the loops over without firing them.
    expect(await third.tick(START + 30 * MIN)).toEqual([]);
    expect(third.nextDueAt()).toBe(START + 90 * MIN);
    await third.settled();
    const startedOver = await stores[stores.length - 1]!.readAll({ types: ['HeartbeatStartedOver'] });
    expect(startedOver.map((e) => [e.data.loop, e.data.at - START])).toEqual([
      ...HEARTBEAT_LOOPS.map((loop) => [loop, 0]),
      ...HEARTBEAT_LOOPS.map((loop) => [loop, 30 * MIN]),
    ]);
  });
});
