/**
 * The recall index snapshot over a real log: a start reads the one the last stop left, catching it
 * up with what the memory heard after it (a run that crashed), and rebuilds (saying why) when it
 * was written against another log, when the file is damaged, not a snapshot, a FIFO or a link,
 * or when the index is built another way.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Packr } from 'msgpackr';
import { describe, expect, it } from 'vitest';
import { SqliteEventStore } from '../../adapters/sqlite/sqliteEventStore.ts';
import { INDEX_SNAPSHOT_FILE } from '../../actors/modules/config.ts';
import {
  buildMemoryIndex,
  CATCH_UP_AT_LEAST,
  catchesUp,
  memoryConfigOf,
  openMemory,
  type MemoryConfig,
} from '../../actors/memory/openMemory.ts';
import { SqliteReadModelTx } from '../../actors/projections/sqliteReadModelTx.ts';
import { createDefaultCatalog, MEMORY_STREAM, SequentialIds, VirtualClock } from '../../events/index.ts';
import { useOpenStores, useTempDir } from '../support/tempDir.ts';

const tempDir = useTempDir();
const stores = useOpenStores();
const SCOPE = 'chat:snapshot';
const START = Date.UTC(2024, 0, 1, 9);

const LINES = [
  'Ada: I took up taekwondo last spring.',
  'Bo: How is the piano going?',
  'Ada: Slowly, I practise chess more than the piano.',
  'Bo: My daughter loves the soup place in London.',
];

let opened = 0;

/** `meddle` changes the store before the memory opens on it (a failing append, a forged read). */
const open = async (dir: string, config: Partial<MemoryConfig> = {}, snapshot = true, meddle?: (store: SqliteEventStore) => void) => {
  const clock = new VirtualClock(START);
  // Each opening names its events apart, as a daemon's random ids would.
  const run = ++opened;
  const store = SqliteEventStore.open(join(dir, 'events.db'), {
    catalog: createDefaultCatalog(),
    clock,
    ids: new SequentialIds(`e${run}`),
  });
  stores.push(store);
  meddle?.(store);
  const logged: string[] = [];
  const memory = await openMemory(store, {
    ids: new SequentialIds(`m${run}`),
    clock,
    startAt: START,
    config,
    ...(snapshot ? { indexSnapshot: { path: join(dir, INDEX_SNAPSHOT_FILE), log: (line: string) => logged.push(line) } } : {}),
  });
  return { store, memory, clock, logged };
};

const say = async (memory: Awaited<ReturnType<typeof open>>['memory'], clock: VirtualClock, line: string) => {
  clock.set(clock.now() + 60_000);
  const [speaker, text] = line.split(': ') as [string, string];
  await memory.observe(SCOPE, { role: 'user', speaker, text, at: clock.now() });
};

const ranked = (memory: Awaited<ReturnType<typeof open>>['memory']) =>
  ['taekwondo', 'piano', 'What did Bo say about London?'].map((q) => memory.index.items.search(q, 10).map((h) => [h.id, h.score]));

/** A memory that heard LINES and stopped, leaving its snapshot; what its index ranked. */
const stopped = async () => {
  const dir = tempDir();
  const live = await open(dir);
  for (const line of LINES) await say(live.memory, live.clock, line);
  const before = ranked(live.memory);
  await live.memory.saveIndexSnapshot(join(dir, INDEX_SNAPSHOT_FILE));
  await live.store.close();
  stores.splice(stores.indexOf(live.store), 1);
  return { dir, before };
};

const reopen = async (dir: string, config: Partial<MemoryConfig> = {}) => {
  const again = await open(dir, config);
  return { ...again, ranked: ranked(again.memory) };
};

describe('recall index snapshot', () => {
  it('a start after a clean stop reads the index back instead of rebuilding it', async () => {
    const { dir, before } = await stopped();
    const again = await reopen(dir);
    expect(again.logged).toEqual([]);
    expect(again.ranked).toEqual(before);
    // The file is the daemon's alone.
    expect(Number.parseInt(execFileSync('stat', ['-c', '%a', join(dir, INDEX_SNAPSHOT_FILE)]).toString(), 8)).toBe(0o600);
  });

  it('a start after a crash catches the snapshot up with what the memory heard since, and ranks as a rebuild does', async () => {
    const { dir } = await stopped();
    // A run that heard two more lines and ended without writing a snapshot.
    const crashed = await open(dir, {}, false);
    await say(crashed.memory, crashed.clock, 'Bo: We moved to a bicycle for the school run.');
    await say(crashed.memory, crashed.clock, 'Ada: The piano teacher moved to London.');
    const live = ranked(crashed.memory);
    await crashed.store.close();
    stores.splice(stores.indexOf(crashed.store), 1);
    const again = await reopen(dir);
    // The run's start and its two lines.
    expect(again.logged).toEqual([
      expect.stringMatching(/^memory: caught the index snapshot up with the 3 memory events after it \(\d+\.\d s in all\)$/),
    ]);
    expect(again.ranked).toEqual(live);
    const rebuilt = await open(dir, {}, false);
    expect(ranked(rebuilt.memory)).toEqual(live);
  });

  it('is written again while running once it lacks enough memory events, and a start after a crash reads that one', async () => {
    const dir = tempDir();
    const live = await open(dir);
    for (const line of LINES) await say(live.memory, live.clock, line);
    const lag = await live.store.streamVersion(MEMORY_STREAM);
    expect(await live.memory.refreshIndexSnapshot(lag + 1)).toBeUndefined();
    expect(existsSync(join(dir, INDEX_SNAPSHOT_FILE))).toBe(false);
    expect(await live.memory.refreshIndexSnapshot(lag)).toBeGreaterThanOrEqual(0);
    // Counted from the snapshot just written: one line more is not enough for another.
    await say(live.memory, live.clock, 'Bo: We moved to a bicycle for the school run.');
    expect(await live.memory.refreshIndexSnapshot(lag)).toBeUndefined();
    const before = ranked(live.memory);
    await live.store.close();
    stores.splice(stores.indexOf(live.store), 1);
    const again = await reopen(dir);
    expect(again.logged).toEqual([
      expect.stringMatching(/^memory: caught the index snapshot up with the \d+ memory events after it \(\d+\.\d s in all\)$/),
    ]);
    expect(again.ranked).toEqual(before);
  });

  it('a snapshot that cannot be caught up is dropped, and the index rebuilt, with a line saying why', async () => {
    const { dir } = await stopped();
    const crashed = await open(dir, {}, false);
    await say(crashed.memory, crashed.clock, 'Bo: We moved to a bicycle for the school run.');
    const live = ranked(crashed.memory);
    await crashed.store.close();
    stores.splice(stores.indexOf(crashed.store), 1);
    // The events after the snapshot read back with one no catch-up can take (as a snapshot lying about what it holds makes).
    const again = await open(dir, {}, true, (store) => {
      const readStream = store.readStream.bind(store);
      store.readStream = async (stream, options) => {
        const events = await readStream(stream, options);
        return options?.fromVersion !== undefined && options.maxCount === undefined
          ? [...events, { ...events[0]!, type: 'ContextEventAppended', data: { scope: SCOPE } } as (typeof events)[number]]
          : events;
      };
    });
    expect(again.logged[0]).toMatch(
      /^memory: the index snapshot is not used \(it could not be caught up with the \d+ memory events after it: .+\); rebuilding the index$/,
    );
    expect(ranked(again.memory)).toEqual(live);
  });

  it('is not written once the memory could not journal a message (its index may hold what the log does not)', async () => {
    const dir = tempDir();
    let full = false;
    const live = await open(dir, {}, true, (store) => {
      const append = store.append.bind(store);
      store.append = (stream, events, options) =>
        full ? Promise.reject(new Error('database or disk is full')) : append(stream, events, options);
    });
    for (const line of LINES) await say(live.memory, live.clock, line);
    await live.memory.saveIndexSnapshot(join(dir, INDEX_SNAPSHOT_FILE));
    const written = readFileSync(join(dir, INDEX_SNAPSHOT_FILE));
    full = true;
    await expect(say(live.memory, live.clock, 'Ada: My zeppelin hangar is behind the mill.')).rejects.toThrow(/disk is full/);
    await expect(live.memory.saveIndexSnapshot(join(dir, INDEX_SNAPSHOT_FILE))).rejects.toThrow(/could not journal a message/);
    await expect(live.memory.refreshIndexSnapshot(0)).rejects.toThrow(/could not journal a message/);
    expect(readFileSync(join(dir, INDEX_SNAPSHOT_FILE)).equals(written)).toBe(true);
  });

  it('a key edited to name another point of the same log is found out by the digest', async () => {
    const { dir } = await stopped();
    const path = join(dir, INDEX_SNAPSHOT_FILE);
    const packr = new Packr({ moreTypes: true });
    const file = packr.unpack(readFileSync(path)) as { key: { streamVersion: number; lastEventId: string } };
    const reader = await open(dir, {}, false);
    const [earlier] = await reader.store.readStream(MEMORY_STREAM, { fromVersion: 2, maxCount: 1 });
    await reader.store.close();
    stores.splice(stores.indexOf(reader.store), 1);
    writeFileSync(path, packr.pack({ ...file, key: { ...file.key, streamVersion: 2, lastEventId: earlier!.id } }));
    const again = await reopen(dir);
    expect(again.logged[0]).toMatch(/not used \(.*is damaged \(its digest does not match\)\); rebuilding the index/);
  });

  it('a rebuild looks at the event loop between steps, and ends there when the start is stopped', async () => {
    const { dir, before } = await stopped();
    const { store, memory } = await open(dir, {}, false);
    const tx = new SqliteReadModelTx(store.db);
    const config = memoryConfigOf({});
    // One item a step: a stop (a Ctrl-C's handler) runs at the first pause, and the rebuild ends there.
    const stopping = new AbortController();
    setImmediate(() => stopping.abort(new Error('stopped while starting')));
    await expect(buildMemoryIndex(store, tx, config, undefined, { stopping: stopping.signal, step: 1 })).rejects.toThrow(
      'stopped while starting',
    );
    // A stop heard before the rebuild begins ends it before it begins.
    await expect(buildMemoryIndex(store, tx, config, undefined, { stopping: stopping.signal })).rejects.toThrow('stopped while starting');
    // Unstopped, the same steps build the index a rebuild builds.
    const { index } = await buildMemoryIndex(store, tx, config, undefined, { step: 1 });
    expect(
      ['taekwondo', 'piano', 'What did Bo say about London?'].map((q) => index.items.search(q, 10).map((h) => [h.id, h.score])),
    ).toEqual(before);
    expect(memory.index.items.size).toBe(index.items.size);
  });

  it('is caught up with up to 10,000 events after it whatever its size, and past that only with no more than it holds', () => {
    expect(catchesUp(5, CATCH_UP_AT_LEAST)).toBe(true);
    expect(catchesUp(5, CATCH_UP_AT_LEAST + 1)).toBe(false);
    expect(catchesUp(50_000, 50_000)).toBe(true);
    expect(catchesUp(50_000, 50_001)).toBe(false);
  });

  it('is not used with another log, or one shorter than it was written against', async () => {
    const { dir } = await stopped();
    const other = tempDir();
    const stranger = await open(other, {}, false);
    for (const line of [...LINES, ...LINES]) await say(stranger.memory, stranger.clock, line);
    await stranger.store.close();
    stores.splice(stores.indexOf(stranger.store), 1);
    writeFileSync(join(other, INDEX_SNAPSHOT_FILE), readFileSync(join(dir, INDEX_SNAPSHOT_FILE)));
    const foreign = await reopen(other);
    expect(foreign.logged).toEqual([
      'memory: the index snapshot is not used (it was written against another log); rebuilding the index',
      // A long wait at start says what it waits for, and how long it took.
      'memory: rebuilding the recall index from 8 utterances',
      expect.stringMatching(/^memory: rebuilt the recall index in \d+\.\d s$/),
    ]);
    const shorter = tempDir();
    writeFileSync(join(shorter, INDEX_SNAPSHOT_FILE), readFileSync(join(dir, INDEX_SNAPSHOT_FILE)));
    const empty = await reopen(shorter);
    // Nothing to rebuild: no more said about it.
    expect(empty.logged).toEqual(['memory: the index snapshot is not used (it was written against another log); rebuilding the index']);
    expect(empty.memory.index.items.size).toBe(0);
  });

  it('is not used when the index is built another way', async () => {
    const { dir } = await stopped();
    const again = await reopen(dir, { lexicon: 'none' });
    expect(again.logged.join('\n')).toMatch(/built another way/);
    const { dir: other } = await stopped();
    const paused = await reopen(other, { neighbourPauseMs: 2 * 3_600_000 });
    expect(paused.logged.join('\n')).toMatch(/built another way/);
  });

  it('a damaged, foreign, linked or FIFO snapshot rebuilds the index with a line saying why, and ranks as a rebuild does', async () => {
    const cases: [string, (path: string) => void, RegExp][] = [
      [
        'damaged',
        (path) => {
          const bytes = readFileSync(path);
          bytes[bytes.length - 10]! ^= 0xff;
          writeFileSync(path, bytes);
        },
        /damaged|could not be read/,
      ],
      ['foreign', (path) => writeFileSync(path, 'not a snapshot at all'), /not an index snapshot|could not be read/],
      [
        'a link',
        (path) => {
          writeFileSync(`${path}.real`, readFileSync(path));
          execFileSync('rm', [path]);
          symlinkSync(`${path}.real`, path);
        },
        /not a regular file/,
      ],
      [
        'a FIFO',
        (path) => {
          execFileSync('rm', [path]);
          execFileSync('mkfifo', [path]);
        },
        /not a regular file/,
      ],
    ];
    for (const [what, spoil, why] of cases) {
      const { dir, before } = await stopped();
      spoil(join(dir, INDEX_SNAPSHOT_FILE));
      const again = await reopen(dir);
      expect(again.logged.join('\n'), what).toMatch(why);
      expect(again.ranked, what).toEqual(before);
    }
  });
});
