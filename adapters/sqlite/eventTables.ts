/** The event log's table, as DDL and as kysely's typed schema. */
import type { Generated } from 'kysely';

export type EventsTable = {
  seq: Generated<number>;
  stream: string;
  version: number;
  id: string;
  type: string;
  schema_version: number;
  at: number;
  causation: string | null;
  correlation: string | null;
  data: Uint8Array;
};

export type EventLogSchema = { events: EventsTable };

export const EVENT_LOG_DDL = `
CREATE TABLE IF NOT EXISTS events (
  seq            INTEGER PRIMARY KEY,
  stream         TEXT    NOT NULL,
  version        INTEGER NOT NULL,
  id             TEXT    NOT NULL,
  type           TEXT    NOT NULL,
  schema_version INTEGER NOT NULL,
  at             INTEGER NOT NULL,
  causation      TEXT,
  correlation    TEXT,
  data           BLOB    NOT NULL
);
CREATE UNIQUE INDEX IF NOT EXISTS events_stream_version ON events (stream, version);
CREATE UNIQUE INDEX IF NOT EXISTS events_id ON events (id);
`;
