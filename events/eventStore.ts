/**
 * The EventStore contract every dialect implements (and the contract suite in
 * test/events checks): an append-only log with a global sequence and per-stream versions.
 *
 * - `append` is atomic per call: all of its events are stored or none.
 * - An append that resolved is durable.
 * - Re-appending events whose ids are already stored, at the same place, is a no-op.
 */
import type { HologramEvent } from './catalog/index.ts';
import type { AnyEvent, NewEventOf, RecordedEventOf } from './envelope.ts';
import type { ExpectedVersion } from './errors.ts';

export type AppendOptions = Readonly<{
  /** `'no_stream'`, `'stream_exists'`, `'any'` (default) or the exact current version. */
  expectedVersion?: ExpectedVersion;
}>;

export type AppendResult<E extends AnyEvent = HologramEvent> = Readonly<{
  /** The stream's version after the append. */
  nextVersion: number;
  /** Global sequence of the last event of this append. */
  lastSeq: number;
  /** The events as stored (for a no-op re-append, the originals). */
  events: readonly RecordedEventOf<E>[];
  /** True when every event was already stored (an idempotent retry). */
  alreadyStored: boolean;
}>;

export type ReadStreamOptions = Readonly<{ fromVersion?: number; maxCount?: number }>;

export type ReadAllOptions<T extends string = string> = Readonly<{
  /** First sequence to return (inclusive); default 1. */
  fromSeq?: number;
  /** Last sequence to return (inclusive). */
  toSeq?: number;
  maxCount?: number;
  /** Only these event types. */
  types?: readonly T[];
  /** Only this stream. */
  stream?: string;
}>;

export type SubscriptionHandler<E extends AnyEvent = HologramEvent> = (events: readonly RecordedEventOf<E>[]) => void | Promise<void>;

export interface Subscription {
  /** Sequence of the last event the handler has finished. */
  readonly position: number;
  /** Resolves when the subscriber has handled every event up to `seq`. */
  caughtUp(seq?: number): Promise<void>;
  stop(): Promise<void>;
}

export type SubscribeOptions<E extends AnyEvent = HologramEvent> = Readonly<{
  /** Last sequence already handled (the checkpoint); delivery starts after it. */
  afterSeq: number;
  handler: SubscriptionHandler<E>;
  batchSize?: number;
  /** Called when the handler throws; the subscription stops at the failing batch. */
  onError?: (error: unknown) => void;
}>;

/**
 * A log of the events of union `E` (by default every event this build declares): appends are
 * typed by event type, and reads narrowed to the types asked for.
 */
export interface EventStore<E extends AnyEvent = HologramEvent> {
  append(stream: string, events: readonly NewEventOf<E>[], options?: AppendOptions): Promise<AppendResult<E>>;
  readStream(stream: string, options?: ReadStreamOptions): Promise<readonly RecordedEventOf<E>[]>;
  readAll<T extends E['type'] = E['type']>(options?: ReadAllOptions<T>): Promise<readonly RecordedEventOf<Extract<E, { type: T }>>[]>;
  /** Sequence of the newest event (0 for an empty log). */
  headSeq(): Promise<number>;
  /** Current version of a stream (0 when it does not exist). */
  streamVersion(stream: string): Promise<number>;
  /** Tails the log from a checkpoint: catches up first, then follows new appends. */
  subscribe(options: SubscribeOptions<E>): Subscription;
  close(): Promise<void>;
}
