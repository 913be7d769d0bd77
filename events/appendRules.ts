/**
 * The rules of `append` that every dialect shares: the expected-version check, the
 * idempotent re-append check and preparing new events. Pure.
 */
import type { Clock, IdSource } from './clock.ts';
import { encodePayload } from './codec.ts';
import type { NewEvent, RecordedEvent } from './envelope.ts';
import type { EventCatalog } from './eventCatalog.ts';
import { DuplicateEventId, ExpectedVersionConflict, type ExpectedVersion } from './errors.ts';

export const assertExpectedVersion = (stream: string, expected: ExpectedVersion, actual: number): void => {
  const ok =
    expected === 'any' || (expected === 'no_stream' && actual === 0) || (expected === 'stream_exists' && actual > 0) || expected === actual;
  if (!ok) throw new ExpectedVersionConflict(stream, expected, actual);
};

/**
 * The retry rule, decided on the batch's first id: when it is stored, the batch must repeat
 * one stored run exactly (same stream, consecutive versions, same types and payloads) and is
 * then a no-op whatever the expected version; otherwise it is a `DuplicateEventId`.
 * Returns undefined when the first id is new; a later stored id is then refused after the
 * expected-version check (the store's unique index, or `assertNoStoredId`).
 */
export const matchReappend = (
  stream: string,
  events: readonly NewEvent[],
  stored: readonly (RecordedEvent | undefined)[],
): readonly RecordedEvent[] | undefined => {
  const first = stored[0];
  if (first === undefined) return undefined;
  for (let i = 0; i < events.length; i++) {
    const existing = stored[i];
    if (
      !existing ||
      existing.stream !== stream ||
      existing.type !== events[i]!.type ||
      existing.version !== first.version + i ||
      !encodePayload(existing.data).equals(encodePayload(events[i]!.data))
    ) {
      throw new DuplicateEventId(existing?.id ?? first.id, existing?.seq ?? first.seq);
    }
  }
  return stored as readonly RecordedEvent[];
};

export type PreparedEvent = Readonly<{
  id: string;
  type: string;
  schemaVersion: number;
  at: number;
  causation: string | null;
  correlation: string | null;
  data: unknown;
}>;

/** Validates each payload against its declared type and fills id and time. */
export const prepareEvents = (catalog: EventCatalog, events: readonly NewEvent[], clock: Clock, ids: IdSource): PreparedEvent[] => {
  const seen = new Set<string>();
  return events.map((event) => {
    const definition = catalog.validate(event.type, event.data);
    const id = event.id ?? ids.next();
    if (seen.has(id)) throw new DuplicateEventId(id, undefined);
    seen.add(id);
    return {
      id,
      type: event.type,
      schemaVersion: definition.schemaVersion,
      at: event.at ?? clock.now(),
      causation: event.causation ?? null,
      correlation: event.correlation ?? null,
      data: event.data,
    };
  });
};

export const assertStreamName = (stream: string): void => {
  if (typeof stream !== 'string' || stream.length === 0 || stream.length > 512) {
    throw new RangeError(`a stream name must be a non-empty string of at most 512 characters; got ${JSON.stringify(stream)}`);
  }
};
