/**
 * The recall index kept across a stop. The memory writes it when it stops; the next start reads
 * it instead of rebuilding the index from the log and the read models, when it was written by
 * this log (the memory event it names is at the version it names) and the index would be built
 * the same way (format, tokenizer, lexicon, neighbour weights and pause). Memory events appended
 * after it (a run that ended in a crash) are then caught up one by one, so a start pays for what
 * happened since the snapshot, not for the whole history. Anything else (no file, another log, a
 * file that is not a regular file, a damaged one) rebuilds, as a start without it would. A cache
 * in the data dir, never a source of truth.
 */
import { createHash } from 'node:crypto';
import { Packr } from 'msgpackr';
import { readRegularFile, writePrivateFile } from '../../adapters/files/privateFiles.ts';
import { MEMORY_STREAM, packWith, type EventStore } from '../../events/index.ts';
import {
  MemoryIndex,
  type MemoryIndexOptions,
  type MemoryIndexState,
  type ReadModelTx,
  TOKENIZER_VERSION,
} from '../../projections/index.ts';

/** Bumped whenever what MemoryIndex.toState holds, or what it means, changes (6: the digest covers the key too). */
const FORMAT = 6;

const packr = new Packr({ moreTypes: true });

/**
 * The state with every text written once: the utterances' texts, which the items' own texts and
 * their neighbours repeat many times over, become indexes into one table.
 */
type StoredState = Readonly<{
  strings: readonly string[];
  utterances: readonly Readonly<{ scope: string; eventIds: readonly string[]; texts: readonly number[]; ats: readonly number[] }>[];
  speakers: readonly string[];
  items: readonly (Omit<MemoryIndexState['items']['items'][number], 'text' | 'neighbours'> & {
    text: number;
    neighbours: readonly number[];
  })[];
  movedTo: MemoryIndexState['items']['movedTo'];
  bm25: MemoryIndexState['items']['bm25'];
}>;

const stored = (state: MemoryIndexState): StoredState => {
  const strings: string[] = [];
  const at = new Map<string, number>();
  const ref = (text: string): number => {
    let i = at.get(text);
    if (i === undefined) {
      i = strings.push(text) - 1;
      at.set(text, i);
    }
    return i;
  };
  return {
    utterances: state.utterances.map((u) => ({ scope: u.scope, eventIds: u.eventIds, texts: u.texts.map(ref), ats: u.ats })),
    speakers: state.speakers,
    items: state.items.items.map((item) => ({
      ...item,
      text: ref(item.text),
      neighbours: item.neighbours.flatMap((n) => [ref(n.text), n.weight]),
    })),
    movedTo: state.items.movedTo,
    bm25: state.items.bm25,
    strings,
  };
};

const restored = (state: StoredState): MemoryIndexState => {
  const text = (i: number): string => {
    const found = state.strings[i];
    if (found === undefined) throw new RangeError(`text ${i} is not in the snapshot's table`);
    return found;
  };
  return {
    utterances: state.utterances.map((u) => ({ scope: u.scope, eventIds: u.eventIds, texts: u.texts.map(text), ats: u.ats })),
    speakers: state.speakers,
    items: {
      items: state.items.map(({ neighbours, ...item }) => ({
        ...item,
        text: text(item.text),
        neighbours: Array.from({ length: neighbours.length / 2 }, (_, i) => ({
          text: text(neighbours[2 * i]!),
          weight: neighbours[2 * i + 1]!,
        })),
      })),
      movedTo: state.movedTo,
      bm25: state.bm25,
    },
  };
};

/** What the index was built from and how: a snapshot is used only when this is the same at the start reading it. */
export type SnapshotKey = Readonly<{
  format: number;
  tokenizer: string;
  build: string;
  streamVersion: number;
  lastEventId: string | null;
}>;

/** The key for the memory's stream as it is now, the index built as `build` describes (lexicon, neighbour weights). */
export const snapshotKey = async (store: EventStore, build: string): Promise<SnapshotKey> => {
  const streamVersion = await store.streamVersion(MEMORY_STREAM);
  const [last] = streamVersion > 0 ? await store.readStream(MEMORY_STREAM, { fromVersion: streamVersion, maxCount: 1 }) : [];
  return { format: FORMAT, tokenizer: TOKENIZER_VERSION, build, streamVersion, lastEventId: last?.id ?? null };
};

/** Whether an index built as `key` says is built as `now` says (whatever the stream's version). */
const builtAlike = (key: SnapshotKey, now: SnapshotKey): boolean =>
  key.format === now.format && key.tokenizer === now.tokenizer && key.build === now.build;

/** Whether the memory's stream in `store` is the one `key` was written against, up to its version (and perhaps longer since). */
const sameHistory = async (store: EventStore, key: SnapshotKey): Promise<boolean> => {
  if (!Number.isSafeInteger(key.streamVersion) || key.streamVersion < 0) return false;
  if (key.streamVersion === 0) return key.lastEventId === null;
  const [event] = await store.readStream(MEMORY_STREAM, { fromVersion: key.streamVersion, maxCount: 1 });
  return event?.version === key.streamVersion && event.id === key.lastEventId;
};

/** The key and the payload together: a key moved onto another payload, or edited, no longer matches. */
const digestOf = (key: SnapshotKey, payload: Uint8Array): string =>
  createHash('sha256')
    .update(JSON.stringify([key.format, key.tokenizer, key.build, key.streamVersion, key.lastEventId]))
    .update('\0')
    .update(payload)
    .digest('hex');

/** Writes `index` as of `key` to `path` (0600, whole: a reader never sees half of one). */
export const writeIndexSnapshot = (path: string, index: MemoryIndex, key: SnapshotKey): void => {
  const payload = packWith(packr, stored(index.toState()));
  const file = packWith(packr, { key, digest: digestOf(key, payload), payload });
  writePrivateFile(path, file);
};

/** The index a snapshot holds, as of `streamVersion` of the memory's stream; or why it is not used (empty: there is none). */
export type SnapshotRead = Readonly<{ index: MemoryIndex; streamVersion: number }> | Readonly<{ unused: string }>;

/**
 * The index the snapshot at `path` holds, over `tx`, if it was written against the memory's
 * stream in `store` (as it is now, or as it was earlier) and built as `now` says; otherwise why
 * it is not used (`unused` is empty when there is simply no snapshot).
 */
export const readIndexSnapshot = async (
  path: string,
  now: SnapshotKey,
  store: EventStore,
  tx: ReadModelTx,
  options: MemoryIndexOptions,
): Promise<SnapshotRead> => {
  try {
    const file = readRegularFile(path);
    if (file === undefined) return { unused: '' };
    if (typeof file === 'string') return { unused: file };
    const { key: written, digest, payload } = packr.unpack(file) as { key?: SnapshotKey; digest?: string; payload?: Uint8Array };
    if (!written || typeof digest !== 'string' || !(payload instanceof Uint8Array)) return { unused: `${path} is not an index snapshot` };
    if (!builtAlike(written, now)) return { unused: 'the index is built another way now' };
    if (written.streamVersion > now.streamVersion || !(await sameHistory(store, written))) {
      return { unused: 'it was written against another log' };
    }
    if (digestOf(written, payload) !== digest) return { unused: `${path} is damaged (its digest does not match)` };
    const index = MemoryIndex.fromState(tx, options, restored(packr.unpack(payload) as StoredState));
    return { index, streamVersion: written.streamVersion };
  } catch (error) {
    return { unused: `${path} could not be read: ${(error as Error).message}` };
  }
};
