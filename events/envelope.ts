/**
 * The shapes of events: what a caller appends and what the log hands back.
 * A recorded event is immutable; its `seq` is its global position in the log.
 */

/** Largest global sequence or stream version the log supports (Number.MAX_SAFE_INTEGER). */
export const MAX_POSITION = Number.MAX_SAFE_INTEGER;

/** An event as a caller hands it to `append`. Missing `id` / `at` are filled by the store. */
export type NewEvent<T extends string = string, D = unknown> = Readonly<{
  type: T;
  data: D;
  /** Unique event id; re-appending the same ids is a no-op (idempotent retry). */
  id?: string;
  /** Event time in epoch milliseconds; the store's clock fills it when absent. */
  at?: number;
  /** Id of the event that caused this one. */
  causation?: string;
  /** Id shared by every event of one piece of work (a turn, a boot). */
  correlation?: string;
}>;

/** Any event: what generic code (stores, codecs, replay) handles without knowing the type. */
export type AnyEvent = Readonly<{ type: string; data: unknown }>;

/** The events of a union as a caller appends them (one `NewEvent` per member, so type and data agree). */
export type NewEventOf<E extends AnyEvent> = E extends AnyEvent ? NewEvent<E['type'], E['data']> : never;

/** The events of a union as the log returns them. */
export type RecordedEventOf<E extends AnyEvent> = E extends AnyEvent ? RecordedEvent<E['type'], E['data']> : never;

/** The type and data of a recorded event without its envelope, still typed as the member of its union. */
export const bareEvent = <E extends AnyEvent>(event: RecordedEventOf<E>): E => ({ type: event.type, data: event.data }) as unknown as E;

/** An event as the log stores and returns it. */
export type RecordedEvent<T extends string = string, D = unknown> = Readonly<{
  seq: number;
  stream: string;
  version: number;
  id: string;
  type: T;
  schemaVersion: number;
  at: number;
  causation: string | null;
  correlation: string | null;
  data: D;
}>;
