/**
 * Damage and bad input: a broken row, a type this build no longer declares, a truncated or
 * foreign file, an invalid payload. Each must give a clear typed error naming what is wrong;
 * none may be skipped or read as something else.
 */
import Database from 'better-sqlite3';
import { execFileSync } from 'node:child_process';
import { closeSync, mkdirSync, openSync, readFileSync, statSync, truncateSync, writeFileSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { SqliteEventStore } from '../../adapters/sqlite/sqliteEventStore.ts';
import {
  CorruptEvent,
  createDefaultCatalog,
  defineEvent,
  encodePayload,
  EventLogUnavailable,
  InvalidEventPayload,
  schema as s,
  SequentialIds,
  UnknownEventType,
  VirtualClock,
  type EventCatalog,
  type AnyEvent,
} from '../../events/index.ts';
import { useTempDir } from '../support/tempDir.ts';
import { createTestCatalog, noted } from '../support/testCatalog.ts';

const tempDir = useTempDir();

const openStore = (file: string, catalog: EventCatalog = createTestCatalog()) =>
  SqliteEventStore.open<AnyEvent>(file, { catalog, clock: new VirtualClock(1_000), ids: new SequentialIds() });

/** A store with events n=1..5 on streams 'a' (seqs 1, 2, 4, 5) and 'b' (seq 3). */
const storeWithFiveEvents = async () => {
  const store = openStore(join(tempDir(), 'events.db'));
  await store.append('a', [noted(1), noted(2)]);
  await store.append('b', [{ type: 'TestNoted', data: { n: 3, text: 'hello there' } }]);
  await store.append('a', [noted(4), noted(5)]);
  return store;
};

const validMap = encodePayload({ n: 3, text: 'hello there' });
const damagedPayloads: [string, Buffer][] = [
  ['the byte 0xc1, which msgpack never uses', Buffer.from([0xc1])],
  ['a msgpack map cut short', validMap.subarray(0, validMap.length - 4)],
  ['a map whose value is the byte 0xc1', Buffer.from([0x81, 0xa1, 0x6e, 0xc1])], // { n: <0xc1> }
  ['valid msgpack followed by stray bytes', Buffer.concat([validMap, Buffer.from([0x01, 0x02])])],
  ['no bytes at all', Buffer.alloc(0)],
];

describe('a damaged payload row', () => {
  it.each(damagedPayloads)('with %s is refused as CorruptEvent naming its seq, on every read path', async (_, bytes) => {
    const store = await storeWithFiveEvents();
    try {
      store.db.prepare('UPDATE events SET data = ? WHERE seq = 3').run(bytes);
      const reads = [
        () => store.readAll(),
        () => store.readAll({ fromSeq: 3, toSeq: 3 }),
        () => store.readAll({ stream: 'b' }),
        () => store.readAll({ types: ['TestNoted'] }),
        () => store.readStream('b'),
      ];
      for (const read of reads) {
        const error = await read().catch((e: unknown) => e);
        expect(error).toBeInstanceOf(CorruptEvent);
        expect(error).toMatchObject({ code: 'CORRUPT_EVENT', seq: 3 });
        expect((error as Error).message).toContain('event seq 3');
      }
      // A subscriber stops at the damaged row instead of stepping over it.
      const seen: number[] = [];
      const errors: unknown[] = [];
      const subscription = store.subscribe({
        afterSeq: 0,
        batchSize: 1,
        handler: (events) => void seen.push(...events.map((e) => e.seq)),
        onError: (e) => errors.push(e),
      });
      await expect(subscription.caughtUp(5)).rejects.toBeInstanceOf(CorruptEvent);
      expect(seen).toEqual([1, 2]);
      // Ranges that do not include the damaged row still read.
      expect((await store.readAll({ toSeq: 2 })).map((e) => e.seq)).toEqual([1, 2]);
      expect((await store.readAll({ fromSeq: 4 })).map((e) => e.seq)).toEqual([4, 5]);
      expect((await store.readStream('a')).map((e) => e.seq)).toEqual([1, 2, 4, 5]);
      // The raw row stays inspectable.
      expect(Buffer.from((await store.readAllRows({ fromSeq: 3, toSeq: 3 }))[0]!.data)).toEqual(bytes);
    } finally {
      await store.close();
    }
  });
});

describe('a row of a type this build does not declare', () => {
  it('is refused with UnknownEventType naming the type and the seq, never skipped', async () => {
    const store = await storeWithFiveEvents();
    try {
      store.db
        .prepare(
          'INSERT INTO events (seq, stream, version, id, type, schema_version, at, causation, correlation, data) VALUES (6, ?, 1, ?, ?, 1, 0, NULL, NULL, ?)',
        )
        .run('c', 'gone-1', 'NoLongerDeclared', encodePayload({ what: 'ever' }));
      await store.append('a', [noted(7)]);
      for (const read of [
        () => store.readAll(),
        () => store.readAll({ stream: 'c' }),
        () => store.readStream('c'),
        () => store.readAll({ types: ['NoLongerDeclared'] }),
      ]) {
        const error = await read().catch((e: unknown) => e);
        expect(error).toBeInstanceOf(UnknownEventType);
        expect(error).toMatchObject({ code: 'UNKNOWN_EVENT_TYPE', eventType: 'NoLongerDeclared' });
        expect((error as Error).message).toContain("'NoLongerDeclared'");
        expect((error as Error).message).toContain('seq 6');
      }
      expect((await store.readAll({ types: ['TestNoted'] as string[] })).map((e) => e.seq)).toEqual([1, 2, 3, 4, 5, 7]);
    } finally {
      await store.close();
    }
  });
});

describe('a damaged database file', () => {
  it('refuses a truncated file at open, saying it is truncated', async () => {
    const file = join(tempDir(), 'events.db');
    const store = openStore(file);
    const text = 'x'.repeat(200);
    for (let batch = 0; batch < 50; batch++) {
      await store.append(
        `s-${batch % 7}`,
        Array.from({ length: 100 }, (_, i) => ({ type: 'TestNoted', data: { n: batch * 100 + i, text } })),
      );
    }
    await store.close(); // checkpoints the WAL into the main file
    const size = statSync(file).size;
    expect(size).toBeGreaterThan(1_000_000); // 5,000 events over many pages

    truncateSync(file, Math.floor(size / 2));
    const error = (() => {
      try {
        openStore(file);
      } catch (e) {
        return e;
      }
    })();
    expect(error).toBeInstanceOf(EventLogUnavailable);
    expect((error as Error).message).toContain('truncated');
    expect((error as Error).message).toContain(file);
  });

  // A red team's full disk: the checkpoint at shutdown wrote page 1 (the new page count) and no room was left for the
  // pages after the main file's end, which the WAL still held. homed called the log truncated and said to restore a backup.
  it('opens a file shorter than its header declares when its WAL holds the pages past its end, and reads every event', async () => {
    const live = join(tempDir(), 'events.db');
    const store = openStore(live);
    const text = 'y'.repeat(200);
    await store.append('s', [{ type: 'TestNoted', data: { n: -1, text } }]);
    // The main file as checkpointed small, the rest of the log in the WAL only.
    const other = new Database(live);
    other.pragma('wal_checkpoint(TRUNCATE)');
    other.close();
    for (let batch = 0; batch < 10; batch++) {
      await store.append(
        's',
        Array.from({ length: 50 }, (_, i) => ({ type: 'TestNoted', data: { n: batch * 50 + i, text } })),
      );
    }
    // Copied while open, as a crash leaves them.
    const dir = tempDir();
    const file = join(dir, 'events.db');
    for (const suffix of ['', '-wal']) writeFileSync(`${file}${suffix}`, readFileSync(`${live}${suffix}`));
    await store.close();
    const main = readFileSync(file);
    const wal = readFileSync(`${file}-wal`);
    const pageSize = wal.readUInt32BE(8);
    let page1: Buffer | undefined;
    for (let at = 32; at + 24 + pageSize <= wal.length; at += 24 + pageSize) {
      if (wal.readUInt32BE(at) === 1) page1 = wal.subarray(at + 24, at + 24 + pageSize);
    }
    expect(page1!.readUInt32BE(28) * pageSize).toBeGreaterThan(main.length);
    writeFileSync(file, Buffer.concat([page1!, main.subarray(pageSize)]));

    const reopened = openStore(file);
    expect((await reopened.readAll()).length).toBe(501);
    await reopened.close();

    // Without the WAL, the pages are gone: that is truncated.
    const lost = join(tempDir(), 'events.db');
    writeFileSync(lost, Buffer.concat([page1!, main.subarray(pageSize)]));
    expect(() => openStore(lost)).toThrow(/is truncated: its header declares/);
  });

  it.each([
    ['garbage bytes', Buffer.from(Array.from({ length: 8192 }, (_, i) => (i * 7919) % 251))],
    ['a file shorter than the SQLite header', Buffer.from('SQLite format 3\0')],
    ['a text file', Buffer.from('{"events": []}\n'.repeat(100))],
  ])('refuses %s at open as not a SQLite database', (_, bytes) => {
    const file = join(tempDir(), 'events.db');
    writeFileSync(file, bytes);
    expect(() => openStore(file)).toThrow(EventLogUnavailable);
    expect(() => openStore(file)).toThrow(/not a SQLite database/);
  });

  it.each([
    ['a FIFO', (path: string) => execFileSync('mkfifo', [path])],
    ['a folder', (path: string) => mkdirSync(path)],
  ])('refuses %s at open as not a regular file, without waiting on it', (_, make) => {
    const file = join(tempDir(), 'events.db');
    make(file);
    expect(() => openStore(file)).toThrow(EventLogUnavailable);
    expect(() => openStore(file)).toThrow(`${file} is not a regular file (a folder, a FIFO or a device)`);
  });

  // The read must fail, typed, rather than return a short log.
  it('does not read past damaged pages as if the log ended there', async () => {
    const file = join(tempDir(), 'events.db');
    const store = openStore(file);
    for (let batch = 0; batch < 20; batch++) {
      await store.append(
        's',
        Array.from({ length: 100 }, (_, i) => ({ type: 'TestNoted', data: { n: batch * 100 + i, text: 'y'.repeat(200) } })),
      );
    }
    await store.close();
    const pageSize = 4096;
    const fd = openSync(file, 'r+');
    try {
      // Overwrite pages in the middle of the table with garbage; the header stays intact.
      const middle = Math.floor(statSync(file).size / pageSize / 2) * pageSize;
      writeSync(fd, Buffer.alloc(pageSize * 4, 0x5a), 0, pageSize * 4, middle);
    } finally {
      closeSync(fd);
    }
    const reopened = (() => {
      try {
        return openStore(file);
      } catch (error) {
        return error;
      }
    })();
    if (reopened instanceof SqliteEventStore) {
      try {
        const error = await reopened.readAll().catch((e: unknown) => e);
        expect(error).toBeInstanceOf(EventLogUnavailable);
        expect((error as Error).message).toMatch(/is damaged .*restore the data dir/);
      } finally {
        await reopened.close();
      }
    } else {
      expect(reopened).toBeInstanceOf(EventLogUnavailable);
    }
  });
});

describe('an invalid payload at append', () => {
  it('names the type and the path of a nested field', async () => {
    const TestNested = defineEvent(
      'TestNested',
      s.object({ inner: s.object({ k: s.integer() }), list: s.optional(s.array(s.object({ v: s.string() }))) }),
    );
    const store = openStore(join(tempDir(), 'events.db'), createDefaultCatalog().add(TestNested));
    try {
      const error = await store.append('s', [{ type: 'TestNested', data: { inner: { k: 'seven' } } }]).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(InvalidEventPayload);
      expect(error).toMatchObject({ eventType: 'TestNested', field: 'inner.k', expected: 'integer', got: 'string' });
      expect((error as Error).message).toContain("'TestNested'");
      expect((error as Error).message).toContain("'inner.k'");

      await expect(store.append('s', [{ type: 'TestNested', data: { inner: { k: 1, extra: 2 } } }])).rejects.toThrow(/'inner\.extra'/);
      await expect(store.append('s', [{ type: 'TestNested', data: { inner: { k: 1 }, list: [{ v: 'a' }, { v: 2 }] } }])).rejects.toThrow(
        /'list\[1\]\.v'/,
      );
      await expect(store.append('s', [{ type: 'TestNested', data: { inner: { k: 1, constructor: 2 } } }])).rejects.toThrow(
        /'inner\.constructor'/,
      );
      expect(await store.headSeq()).toBe(0);
    } finally {
      await store.close();
    }
  });
});
