/**
 * The recall index kept across a clean stop. The memory writes it when it stops; the next start
 * reads it instead of rebuilding the index from the log and the read models, when the memory's
 * stream is exactly as it was when the file was written (same version, same last event) and the
 * index would be built the same way (format, tokenizer, lexicon, neighbour weights and pause). Anything
 * else (no file, a crash or another log since, a file that is not a regular file, a damaged one)
 * rebuilds, as a start without it would. A cache in the data dir, never a source of truth.
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

/** Bumped whenever what MemoryIndex.toState holds, or what it means, changes. */
const FORMAT = 5;

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

const sameKey = (a: SnapshotKey, b: SnapshotKey): boolean =>
  a.format === b.format &&
  a.tokenizer === b.tokenizer &&
  a.build === b.build &&
  a.streamVersion === b.streamVersion &&
  a.lastEventId === b.lastEventId;

const digestOf = (payload: Uint8Array): string => createHash('sha256').update(payload).digest('hex');

/** Writes `index` as of `key` to `path` (0600, whole: a reader never sees half of one). */
export const writeIndexSnapshot = (path: string, index: MemoryIndex, key: SnapshotKey): void => {
  const payload = packWith(packr, stored(index.toState()));
  const file = packWith(packr, { key, digest: digestOf(payload), payload });
  writePrivateFile(path, file);
};

export type SnapshotRead = Readonly<{ index: MemoryIndex }> | Readonly<{ unused: string }>;

/**
 * The index the snapshot at `path` holds, over `tx`, if it was written against `key`; otherwise
 * why it is not used (`unused` is empty when there is simply no snapshot).
 */
export const readIndexSnapshot = (path: string, key: SnapshotKey, tx: ReadModelTx, options: MemoryIndexOptions): SnapshotRead => {
  try {
    const file = readRegularFile(path);
    if (file === undefined) return { unused: '' };
    if (typeof file === 'string') return { unused: file };
    const { key: written, digest, payload } = packr.unpack(file) as { key?: SnapshotKey; digest?: string; payload?: Uint8Array };
    if (!written || typeof digest !== 'string' || !(payload instanceof Uint8Array)) return { unused: `${path} is not an index snapshot` };
    if (!sameKey(written, key)) return { unused: 'the memory changed since it was written, or is built another way' };
    if (digestOf(payload) !== digest) return { unused: `${path} is damaged (its digest does not match)` };
    return { index: MemoryIndex.fromState(tx, options, restored(packr.unpack(payload) as StoredState)) };
  } catch (error) {
    return { unused: `${path} could not be read: ${(error as Error).message}` };
  }
};
