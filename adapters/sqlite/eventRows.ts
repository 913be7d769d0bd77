/** Turns a stored row into a RecordedEvent: decodes the payload and upcasts old versions. */
import { CorruptEvent, decodePayload, type EventCatalog, type RecordedEvent } from '../../events/index.ts';
import type { EventsTable } from './eventTables.ts';

export type EventRow = Omit<EventsTable, 'seq'> & { seq: number };

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
