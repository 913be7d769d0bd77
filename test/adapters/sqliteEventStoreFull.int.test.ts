/**
 * A full disk meets an append: the store asks the daemon to free the room it keeps for the log
 * and tries once more, so what was acknowledged before and what comes now are both in the log; a
 * room it cannot free leaves the append failed with SQLite's own code. The database's page limit
 * stands for the disk: past it, SQLite answers SQLITE_FULL as a full disk does.
 */
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { SqliteEventStore } from '../../adapters/sqlite/sqliteEventStore.ts';
import { type AnyEvent, SequentialIds, VirtualClock } from '../../events/index.ts';
import { useTempDir } from '../support/tempDir.ts';
import { createTestCatalog } from '../support/testCatalog.ts';

const tempDir = useTempDir();

const openStore = (whenFull?: () => boolean) =>
  SqliteEventStore.open<AnyEvent>(join(tempDir(), 'events.db'), {
    catalog: createTestCatalog(),
    clock: new VirtualClock(1_000),
    ids: new SequentialIds(),
    ...(whenFull ? { whenFull } : {}),
  });

/** A note larger than a page, so appending it needs pages the limit does not leave. */
const bigNote = (n: number) => ({ type: 'TestNoted', data: { n, text: 'x'.repeat(64 * 1024) } }) as const;

/** No room for another page. */
const fill = (store: SqliteEventStore<AnyEvent>): void => {
  const pages = store.db.pragma('page_count', { simple: true }) as number;
  store.db.pragma(`max_page_count = ${pages}`);
};

describe('an append meeting a full disk', () => {
  it('is tried once more when the room kept for the log is freed, and lands once', async () => {
    let asked = 0;
    const store: SqliteEventStore<AnyEvent> = openStore(() => {
      asked++;
      store.db.pragma('max_page_count = 1073741823');
      return true;
    });
    try {
      await store.append('notes', [bigNote(1)]);
      fill(store);
      await store.append('notes', [bigNote(2)]);
      expect(asked).toBe(1);
      expect((await store.readStream('notes')).map((e) => (e.data as { n: number }).n)).toEqual([1, 2]);
    } finally {
      await store.close();
    }
  });

  it('fails with SQLITE_FULL when no room can be freed, and the log keeps what it held', async () => {
    let asked = 0;
    const store = openStore(() => {
      asked++;
      return false;
    });
    try {
      await store.append('notes', [bigNote(1)]);
      fill(store);
      await expect(store.append('notes', [bigNote(2)])).rejects.toMatchObject({ code: 'SQLITE_FULL' });
      expect(asked).toBe(1);
      expect((await store.readStream('notes')).map((e) => (e.data as { n: number }).n)).toEqual([1]);
    } finally {
      await store.close();
    }
  });
});
