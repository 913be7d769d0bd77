/**
 * Durability of the SQLite event log: the pragmas an acknowledged append depends on, what a
 * reopened file gives back, and upcasting of rows stored at an older schema version.
 */
import { existsSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { SqliteEventStore } from '../../adapters/sqlite/sqliteEventStore.ts';
import {
  createDefaultCatalog,
  defineEvent,
  encodePayload,
  MissingUpcaster,
  schema as s,
  SequentialIds,
  VirtualClock,
  type EventCatalog,
  type AnyEvent,
} from '../../events/index.ts';
import { useTempDir } from '../support/tempDir.ts';
import { createTestCatalog, noted, TestNoted } from '../support/testCatalog.ts';

const tempDir = useTempDir();

/** `idPrefix` differs per opening: sequential ids restart at 1 and would collide with stored ones. */
const openStore = (file: string, catalog: EventCatalog = createTestCatalog(), idPrefix = 'evt') =>
  SqliteEventStore.open<AnyEvent>(file, { catalog, clock: new VirtualClock(5_000), ids: new SequentialIds(idPrefix) });

/** Writes a row as an older build would have: bypasses validation, encodes the raw payload. */
const insertRaw = (
  store: SqliteEventStore<AnyEvent>,
  row: { seq: number; stream: string; version: number; type: string; schemaVersion: number; data: unknown },
) =>
  store.db
    .prepare(
      'INSERT INTO events (seq, stream, version, id, type, schema_version, at, causation, correlation, data) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)',
    )
    .run(row.seq, row.stream, row.version, `raw-${row.seq}`, row.type, row.schemaVersion, 7_000, null, null, encodePayload(row.data));

describe('SQLite event log durability', () => {
  it('opens a file in WAL mode with synchronous=FULL, so a resolved append survives power loss', async () => {
    const store = openStore(join(tempDir(), 'events.db'));
    try {
      expect(store.db.pragma('journal_mode', { simple: true })).toBe('wal');
      expect(store.db.pragma('synchronous', { simple: true })).toBe(2); // FULL; WAL's default here is NORMAL (1)
    } finally {
      await store.close();
    }
  });

  it('gives back every event, envelope and payload, after close and reopen', async () => {
    const file = join(tempDir(), 'events.db');
    const store = openStore(file);
    await store.append('s-1', [
      { type: 'TestNoted', data: { n: 1, text: 'héllo 你好 🎉' }, id: 'e-1', at: 1_234, causation: 'c-1', correlation: 'r-1' },
      { type: 'TestNoted', data: { n: Number.MAX_SAFE_INTEGER } },
    ]);
    await store.append('s-2', [{ type: 'TestRenamed', data: { fullName: 'Ada Lovelace' } }], { expectedVersion: 'no_stream' });
    await store.append('s-1', [{ type: 'TestNoted', data: { n: 0xc1, text: null } }], { expectedVersion: 2 });
    const before = await store.readAll();
    await store.close();

    const reopened = openStore(file, createTestCatalog(), 'reopened');
    try {
      const after = await reopened.readAll();
      expect(after).toEqual(before);
      expect(after).toEqual([
        {
          seq: 1,
          stream: 's-1',
          version: 1,
          id: 'e-1',
          type: 'TestNoted',
          schemaVersion: 1,
          at: 1_234,
          causation: 'c-1',
          correlation: 'r-1',
          data: { n: 1, text: 'héllo 你好 🎉' },
        },
        {
          seq: 2,
          stream: 's-1',
          version: 2,
          id: 'evt-1',
          type: 'TestNoted',
          schemaVersion: 1,
          at: 5_000,
          causation: null,
          correlation: null,
          data: { n: Number.MAX_SAFE_INTEGER },
        },
        {
          seq: 3,
          stream: 's-2',
          version: 1,
          id: 'evt-2',
          type: 'TestRenamed',
          schemaVersion: 2,
          at: 5_000,
          causation: null,
          correlation: null,
          data: { fullName: 'Ada Lovelace' },
        },
        {
          seq: 4,
          stream: 's-1',
          version: 3,
          id: 'evt-3',
          type: 'TestNoted',
          schemaVersion: 1,
          at: 5_000,
          causation: null,
          correlation: null,
          data: { n: 0xc1, text: null },
        }, // its bytes hold 0xc1 legitimately
      ]);
      expect(await reopened.readStream('s-1')).toEqual([after[0], after[1], after[3]]);
      expect(await reopened.headSeq()).toBe(4);
      expect(await reopened.streamVersion('s-1')).toBe(3);
      // The reopened log goes on where it stopped, and still knows the old ids.
      await expect(reopened.append('s-1', [noted(5)], { expectedVersion: 2 })).rejects.toMatchObject({
        code: 'EXPECTED_VERSION_CONFLICT',
        actual: 3,
      });
      const retry = await reopened.append('s-1', [{ type: 'TestNoted', data: { n: 1, text: 'héllo 你好 🎉' }, id: 'e-1' }]);
      expect(retry).toMatchObject({ alreadyStored: true, lastSeq: 1 });
      expect((await reopened.append('s-1', [noted(5)], { expectedVersion: 3 })).lastSeq).toBe(5);
    } finally {
      await reopened.close();
    }
  });

  it('closes the file on close(): the WAL is checkpointed into the main file and removed', async () => {
    const file = join(tempDir(), 'events.db');
    const store = openStore(file);
    await store.append(
      's',
      Array.from({ length: 200 }, (_, i) => noted(i)),
    );
    expect(existsSync(`${file}-wal`)).toBe(true);
    await store.close();
    expect(store.db.open).toBe(false);
    expect(existsSync(`${file}-wal`)).toBe(false);
    expect(statSync(file).size).toBeGreaterThan(4096); // the events are in the main file now
  });

  it('keeps every append of a group commit atomic on its own: one failing append takes none of the others with it', async () => {
    const store = openStore(join(tempDir(), 'events.db'));
    try {
      store.addInlineHandler((events) => {
        if (events.some((e) => (e.data as { n?: number }).n === 13)) throw new Error('inline projection refused 13');
      });
      const results = await Promise.allSettled([
        store.append('a', [noted(1), noted(2)]),
        store.append('b', [noted(12), noted(13)]),
        store.append('c', [noted(3)]),
      ]);
      expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
      const all = await store.readAll();
      expect(all.map((e) => [e.seq, e.stream, (e.data as { n: number }).n])).toEqual([
        [1, 'a', 1],
        [2, 'a', 2],
        [3, 'c', 3],
      ]);
      expect(await store.streamVersion('b')).toBe(0);
    } finally {
      await store.close();
    }
  });
});

describe('SQLite event log upcasting on read', () => {
  it('lifts a row stored at an older schema version to the declared shape, keeping the stored version in the envelope', async () => {
    const file = join(tempDir(), 'events.db');
    const store = openStore(file);
    try {
      await store.append('people', [noted(1)]);
      insertRaw(store, { seq: 2, stream: 'people', version: 2, type: 'TestRenamed', schemaVersion: 1, data: { name: 'Ada' } });
      await store.append('people', [{ type: 'TestRenamed', data: { fullName: 'Grace' } }], { expectedVersion: 2 });

      const expected = [
        expect.objectContaining({ seq: 2, type: 'TestRenamed', schemaVersion: 1, data: { fullName: 'Ada' } }),
        expect.objectContaining({ seq: 3, type: 'TestRenamed', schemaVersion: 2, data: { fullName: 'Grace' } }),
      ];
      // Every read path decodes through the same upcast: the range read, the filtered read,
      // the stream read, and the retry check of a re-append.
      expect((await store.readAll()).slice(1)).toEqual(expected);
      expect(await store.readAll({ types: ['TestRenamed'] })).toEqual(expected);
      expect(await store.readStream('people', { fromVersion: 2 })).toEqual(expected);
      const retry = await store.append('people', [{ type: 'TestRenamed', data: { fullName: 'Ada' }, id: 'raw-2' }]);
      expect(retry.alreadyStored).toBe(true);
      expect(retry.events).toEqual([expected[0]]);
    } finally {
      await store.close();
    }
  });

  it('refuses a row whose stored version has no upcaster path, with MissingUpcaster naming the type', async () => {
    // Declared at v3; only v2 -> v3 is known, so a v1 row cannot be read.
    const TestMoved = defineEvent('TestMoved', s.object({ to: s.string(), at: s.integer() }), {
      schemaVersion: 3,
      upcasters: [{ from: 2, up: (data: { to: string }) => ({ to: data.to, at: 0 }) }],
    });
    const catalog = createDefaultCatalog().add(TestNoted).add(TestMoved);
    const store = openStore(join(tempDir(), 'events.db'), catalog);
    try {
      insertRaw(store, { seq: 1, stream: 'm', version: 1, type: 'TestMoved', schemaVersion: 2, data: { to: 'north' } });
      expect((await store.readAll())[0]).toMatchObject({ schemaVersion: 2, data: { to: 'north', at: 0 } });

      insertRaw(store, { seq: 2, stream: 'm', version: 2, type: 'TestMoved', schemaVersion: 1, data: { where: 'south' } });
      for (const read of [() => store.readAll(), () => store.readStream('m'), () => store.readAll({ stream: 'm' })]) {
        const error = await read().catch((e: unknown) => e);
        expect(error).toBeInstanceOf(MissingUpcaster);
        expect(error).toMatchObject({ code: 'MISSING_UPCASTER', eventType: 'TestMoved', from: 1, to: 3 });
        expect((error as Error).message).toContain("'TestMoved'");
      }
      // Rows before the unreadable one still read.
      expect(await store.readAll({ toSeq: 1 })).toHaveLength(1);
    } finally {
      await store.close();
    }
  });
});
