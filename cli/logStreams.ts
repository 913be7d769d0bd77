/**
 * The streams `homed log` can name: taken from the stream catalog (a read model), their counts
 * and latest types read from the log itself, which the catalog may lag (a daemon's last stop
 * is appended after its projections stopped). Read-only: `homed log` never writes a read model.
 */
import type { SqliteEventStore } from '../adapters/sqlite/sqliteEventStore.ts';
import { SqliteReadModelTx } from '../actors/projections/sqliteReadModelTx.ts';
import { type StreamEntry, streamCatalog } from '../projections/index.ts';
import { closestNames } from '../events/index.ts';

/** The stream names the catalog recorded; none on a log no daemon has projected yet (no catalog table). */
const catalogued = (store: SqliteEventStore): StreamEntry[] => {
  try {
    return streamCatalog(new SqliteReadModelTx(store.db));
  } catch (error) {
    if (/no such table/.test((error as Error).message)) return [];
    throw error;
  }
};

/** Every catalogued stream with its event count and latest type as the log has them now. */
export const listStreams = async (store: SqliteEventStore): Promise<StreamEntry[]> => {
  const streams: StreamEntry[] = [];
  for (const { stream } of catalogued(store)) {
    const version = await store.streamVersion(stream);
    const [last] = await store.readStream(stream, { fromVersion: version, maxCount: 1 });
    streams.push({ stream, version, lastType: last?.type ?? '(none)' });
  }
  return streams;
};

/** The refusal of a `--stream` the log does not have, with the closest names it has. */
export const unknownStream = (store: SqliteEventStore, name: string): string => {
  const near = closestNames(
    name,
    catalogued(store).map((s) => s.stream),
  );
  return (
    `--stream ${name}: the log has no stream of that name` +
    (near.length > 0 ? `; did you mean ${near.join(', ')}?` : '') +
    ' (every stream: homed log --list-streams)'
  );
};
