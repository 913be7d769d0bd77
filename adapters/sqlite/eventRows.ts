/** Turns a stored row into a RecordedEvent: decodes the payload and upcasts old versions. */
import { CorruptEvent, decodePayload, type EventCatalog, type RecordedEvent } from '../../events/index.ts';
import type { EventsTable } from './eventTables.ts';

export type EventRow = Omit<EventsTable, 'seq'> & { seq: number };

/** Column order of `SELECT *` on the events table, for rows read in raw (array) mode. */
export type RawEventRow = [number, string, number, string, string, number, number, string | null, string | null, Uint8Array];

export const rawRowToEvent = (r: RawEventRow, catalog: EventCatalog): RecordedEvent =>
  rowToEvent(
    {
      seq: r[0],
      stream: r[1],
      version: r[2],
      id: r[3],
      type: r[4],
      schema_version: r[5],
      at: r[6],
      causation: r[7],
      correlation: r[8],
      data: r[9],
    },
    catalog,
  );

export const rowToEvent = (row: EventRow, catalog: EventCatalog): RecordedEvent => {
  const where = `event seq ${row.seq}`;
  catalog.definition(row.type, where);
  let data: unknown;
  try {
    data = decodePayload(row.data);
  } catch (error) {
    throw new CorruptEvent(row.seq, `its ${row.type} payload is not valid msgpack`, { cause: error });
  }
  return {
    seq: row.seq,
    stream: row.stream,
    version: row.version,
    id: row.id,
    type: row.type,
    schemaVersion: row.schema_version,
    at: row.at,
    causation: row.causation,
    correlation: row.correlation,
    data: catalog.upcast(row.type, row.schema_version, data, where),
  };
};
