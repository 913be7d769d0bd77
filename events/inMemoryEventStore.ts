/**
 * An EventStore held in memory: the reference the contract suite and the property tests
 * compare dialects against, and a fast store for pure unit tests. Not durable. No I/O.
 */
import { assertExpectedVersion, assertStreamName, matchReappend, prepareEvents } from './appendRules.ts';
import type { Clock, IdSource } from './clock.ts';
import type { HologramEvent } from './catalog/index.ts';
import type { AnyEvent, NewEventOf, RecordedEvent, RecordedEventOf } from './envelope.ts';
import type { EventCatalog } from './eventCatalog.ts';
import type {
  AppendOptions,
  AppendResult,
  EventStore,
  ReadAllOptions,
  ReadStreamOptions,
  SubscribeOptions,
  Subscription,
} from './eventStore.ts';
import { DuplicateEventId, EventStoreClosed } from './errors.ts';
import { startTailSubscription } from './tailSubscription.ts';

export class InMemoryEventStore<E extends AnyEvent = HologramEvent> implements EventStore<E> {
  private readonly log: RecordedEvent[] = [];
  private readonly byId = new Map<string, RecordedEvent>();
  private readonly streams = new Map<string, RecordedEvent[]>();
  private wake: (() => void)[] = [];
  private readonly subscriptions = new Set<Subscription>();
  private closed = false;

  constructor(
    private readonly catalog: EventCatalog,
    private readonly clock: Clock,
    private readonly ids: IdSource,
  ) {}

  async append(stream: string, events: readonly NewEventOf<E>[], options: AppendOptions = {}): Promise<AppendResult<E>> {
    this.assertOpen();
    assertStreamName(stream);
    if (events.length === 0) throw new RangeError(`append to '${stream}' needs at least one event`);
    const prepared = prepareEvents(this.catalog, events, this.clock, this.ids);
    const stored = prepared.map((e) => this.byId.get(e.id));
    const retry = matchReappend(stream, events, stored);
    const streamEvents = this.streams.get(stream) ?? [];
    if (retry) {
      return {
        nextVersion: streamEvents.length,
        lastSeq: retry[retry.length - 1]!.seq,
        events: retry as RecordedEventOf<E>[],
        alreadyStored: true,
      };
    }
    assertExpectedVersion(stream, options.expectedVersion ?? 'any', streamEvents.length);
    const clash = stored.find((e) => e !== undefined);
    if (clash) throw new DuplicateEventId(clash.id, clash.seq);
    const recorded = prepared.map(
      (event, i): RecordedEvent => ({
        ...event,
        seq: this.log.length + 1 + i,
        stream,
        version: streamEvents.length + 1 + i,
        data: structuredClone(event.data),
      }),
    );
    for (const event of recorded) {
      this.log.push(event);
      this.byId.set(event.id, event);
      streamEvents.push(event);
    }
    this.streams.set(stream, streamEvents);
    for (const resolve of this.wake.splice(0)) resolve();
    return {
      nextVersion: streamEvents.length,
      lastSeq: this.log.length,
      events: recorded as RecordedEventOf<E>[],
      alreadyStored: false,
    };
  }

  async readStream(stream: string, options: ReadStreamOptions = {}): Promise<readonly RecordedEventOf<E>[]> {
    this.assertOpen();
    const from = Math.max(1, options.fromVersion ?? 1);
    const events = (this.streams.get(stream) ?? []).slice(from - 1);
    return (options.maxCount === undefined ? events : events.slice(0, options.maxCount)) as RecordedEventOf<E>[];
  }

  async readAll<T extends E['type'] = E['type']>(
    options: ReadAllOptions<T> = {},
  ): Promise<readonly RecordedEventOf<Extract<E, { type: T }>>[]> {
    this.assertOpen();
    const from = Math.max(1, options.fromSeq ?? 1);
    const to = options.toSeq ?? Infinity;
    const types = options.types ? new Set<string>(options.types) : undefined;
    const result: RecordedEvent[] = [];
    for (let i = from - 1; i < this.log.length && result.length < (options.maxCount ?? Infinity); i++) {
      const event = this.log[i]!;
      if (event.seq > to) break;
      if (types && !types.has(event.type)) continue;
      if (options.stream !== undefined && event.stream !== options.stream) continue;
      result.push(event);
    }
    return result as RecordedEventOf<Extract<E, { type: T }>>[];
  }

  async headSeq(): Promise<number> {
    return this.log.length;
  }

  async streamVersion(stream: string): Promise<number> {
    return this.streams.get(stream)?.length ?? 0;
  }

  subscribe(options: SubscribeOptions<E>): Subscription {
    this.assertOpen();
    const subscription = startTailSubscription(
      {
        read: (afterSeq, maxCount) => this.readAll({ fromSeq: afterSeq + 1, maxCount }) as Promise<readonly RecordedEventOf<E>[]>,
        waitForAppend: () => new Promise<void>((resolve) => this.wake.push(resolve)),
      },
      options,
    );
    this.subscriptions.add(subscription);
    return subscription;
  }

  async close(): Promise<void> {
    await Promise.all([...this.subscriptions].map((s) => s.stop()));
    this.closed = true;
    for (const resolve of this.wake.splice(0)) resolve();
  }

  private assertOpen(): void {
    if (this.closed) throw new EventStoreClosed();
  }
}
