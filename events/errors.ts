/**
 * Typed errors of the event log. Each has a stable `code` and a message that says what was
 * wrong and what to do about it.
 */

export abstract class HologramError extends Error {
  abstract readonly code: string;
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
  }
}

export type ExpectedVersion = 'no_stream' | 'stream_exists' | 'any' | number;

export const describeExpected = (expected: ExpectedVersion): string => (typeof expected === 'number' ? `version ${expected}` : expected);

/** An append's expected version did not match the stream's current version. */
export class ExpectedVersionConflict extends HologramError {
  readonly code = 'EXPECTED_VERSION_CONFLICT';
  constructor(
    readonly stream: string,
    readonly expected: ExpectedVersion,
    readonly actual: number,
  ) {
    super(
      `stream '${stream}' is at version ${actual === 0 ? '0 (no stream)' : actual}, but the append expected ` +
        `${describeExpected(expected)}; read the stream again and decide on its current state before retrying`,
    );
  }
}

export const isExpectedVersionConflict = (error: unknown): error is ExpectedVersionConflict => error instanceof ExpectedVersionConflict;

/** A payload does not match its declared type. */
export class InvalidEventPayload extends HologramError {
  readonly code = 'INVALID_EVENT_PAYLOAD';
  constructor(
    readonly eventType: string,
    readonly field: string,
    readonly expected: string,
    readonly got: string,
  ) {
    super(
      `event '${eventType}' has an invalid payload: field '${field || '(data)'}' should be ${expected} but is ${got}; ` +
        `fix the producer so its payload matches the declared schema`,
    );
  }
}

/** An event type this build does not declare. */
export class UnknownEventType extends HologramError {
  readonly code = 'UNKNOWN_EVENT_TYPE';
  constructor(
    readonly eventType: string,
    readonly where: string,
  ) {
    super(
      `${where}: event type '${eventType}' is not declared in this build of Hologram; ` +
        `declare it in events/catalog, or run a build that knows it`,
    );
  }
}

/** An event id already stands in the log for another event. */
export class DuplicateEventId extends HologramError {
  readonly code = 'DUPLICATE_EVENT_ID';
  constructor(
    readonly id: string,
    /** The stored event holding the id, or undefined when one append used it twice. */
    readonly existingSeq: number | undefined,
  ) {
    super(
      (existingSeq === undefined
        ? `event id '${id}' is used twice in one append; `
        : `event id '${id}' is already used by event seq ${existingSeq} with different contents or position; `) +
        `give every new event a fresh id (re-appending the very same batch is fine)`,
    );
  }
}

/** A stored row cannot be decoded: the log file was damaged or written by something else. */
export class CorruptEvent extends HologramError {
  readonly code = 'CORRUPT_EVENT';
  constructor(
    readonly seq: number,
    readonly reason: string,
    options?: { cause?: unknown },
  ) {
    super(
      `event seq ${seq} cannot be read (${reason}); the log was damaged outside Hologram. ` +
        `Restore the data dir from a backup, or inspect the row with 'homed log --from ${seq} --to ${seq} --raw'`,
      options,
    );
  }
}

/** No upcaster leads from a stored schema version to the declared one. */
export class MissingUpcaster extends HologramError {
  readonly code = 'MISSING_UPCASTER';
  constructor(
    readonly eventType: string,
    readonly from: number,
    readonly to: number,
    readonly where: string,
  ) {
    super(
      `${where}: event '${eventType}' is stored at schema version ${from} but this build declares version ${to} ` +
        `and has no upcaster from ${from}; add one in events/catalog`,
    );
  }
}

/** The log cannot be opened or written. */
export class EventLogUnavailable extends HologramError {
  readonly code = 'EVENT_LOG_UNAVAILABLE';
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
  }
}

/** The store was used after `close()`. */
export class EventStoreClosed extends HologramError {
  readonly code = 'EVENT_STORE_CLOSED';
  constructor() {
    super('the event store is closed; open it again before appending or reading');
  }
}

/** What was thrown, as a message: an Error's message, a thrown string itself, anything else printed. */
export const messageOf = (error: unknown): string =>
  error instanceof Error ? error.message : typeof error === 'string' ? error : String(error);

/** The system error code an error carries (`ENOENT`, `EACCES`…), if it is one. */
export const errnoCode = (error: unknown): string | undefined =>
  error instanceof Error && 'code' in error && typeof error.code === 'string' ? error.code : undefined;
