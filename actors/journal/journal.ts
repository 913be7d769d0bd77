/**
 * The journal itself: a message and the facts it caused go into the actor's stream in one
 * atomic append, stamped with the message's time. A failed append breaks the journal for good:
 * the actor's state may now be ahead of the log, so it takes no more messages until the daemon
 * restores it from the log. Every deciding actor records through this, one message at a time.
 */
import {
  HologramError,
  type EventStore,
  type HologramEvent,
  type IdSource,
  type NewHologramEvent,
  type Recorded,
} from '../../events/index.ts';

/** What an actor concludes: an event the catalog declares. */
export type Fact = HologramEvent;
export type TimedMessage = Readonly<{ type: string; at: number }>;

/** How an actor's messages enter its stream: wrapped in `InputDelivered`, or as the declared event each one is. */
export type MessageRecording = 'InputDelivered' | 'as-event';

export class JournalBroken extends HologramError {
  readonly code = 'JOURNAL_BROKEN';
  constructor(actor: string, cause: unknown) {
    super(
      `actor '${actor}' could not journal a message (${(cause as Error)?.message ?? cause}) and stopped taking messages, ` +
        `so its state never runs ahead of the log; restart the daemon to restore it from the log`,
      { cause },
    );
  }
}

/** The event a message is recorded as. */
export const recordedMessage = (stream: string, recording: MessageRecording, message: TimedMessage): NewHologramEvent =>
  recording === 'as-event'
    ? ({ type: message.type, data: (message as TimedMessage & { data: unknown }).data, at: message.at } as NewHologramEvent)
    : { type: 'InputDelivered', data: { to: stream, message }, at: message.at };

export type JournalEnvelope = Readonly<{
  /** Ids for the recorded messages: with them, each fact names the message that caused it (`causation`). */
  ids?: IdSource;
  /** Shared by every event the journal appends: the one piece of work it is (a boot). */
  correlation?: string;
}>;

export class Journal {
  private broken: JournalBroken | undefined;
  private tail: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly store: EventStore,
    readonly stream: string,
    private readonly recording: MessageRecording | ((message: TimedMessage) => MessageRecording) = 'InputDelivered',
    private readonly envelope: JournalEnvelope = {},
  ) {}

  /** Runs `step` after every step queued before it: an actor handles one message at a time. */
  serially<T>(step: () => Promise<T>): Promise<T> {
    const run = this.tail.then(step);
    this.tail = run.catch(() => undefined);
    return run;
  }

  /** Resolves when every step queued so far has run. */
  settled(): Promise<void> {
    return this.tail.then(() => undefined);
  }

  /** Appends the message and its facts as one; resolves with them as recorded. */
  async record(message: TimedMessage, facts: readonly Fact[]): Promise<readonly Recorded[]> {
    if (this.broken) throw this.broken;
    const id = this.envelope.ids?.next();
    const { correlation } = this.envelope;
    const shared = correlation === undefined ? {} : { correlation };
    try {
      const result = await this.store.append(this.stream, [
        {
          ...recordedMessage(this.stream, typeof this.recording === 'function' ? this.recording(message) : this.recording, message),
          ...shared,
          ...(id === undefined ? {} : { id }),
        },
        ...facts.map((fact) => ({ ...fact, at: message.at, ...shared, ...(id === undefined ? {} : { causation: id }) })),
      ]);
      return result.events;
    } catch (error) {
      this.broken = new JournalBroken(this.stream, error);
      throw this.broken;
    }
  }

  /** Throws if an append failed before. */
  assertWhole(): void {
    if (this.broken) throw this.broken;
  }
}
