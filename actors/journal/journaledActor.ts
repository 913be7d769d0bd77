/**
 * Journals an XState actor at its boundary: each message is appended as `InputDelivered`
 * together with the facts the actor emitted while processing it (one atomic append), and
 * only then are the facts handed to the effects. Messages are processed one at a time.
 */
import {
  createActor,
  type ActorOptions,
  type AnyStateMachine,
  type InputFrom,
  type InspectionEvent,
  type Observer,
  type SnapshotFrom,
} from 'xstate';
import { HologramError, type EventStore, type HologramEvent } from '../../events/index.ts';

/** What an actor concludes: an event the catalog declares. */
export type Fact = HologramEvent;
export type TimedMessage = Readonly<{ type: string; at: number }>;

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

export type JournaledActorOptions<TLogic extends AnyStateMachine> = Readonly<{
  store: EventStore;
  /** The stream its inputs and facts go to; also the actor's name in `InputDelivered.to`. */
  stream: string;
  logic: TLogic;
  input: InputFrom<TLogic>;
  /** Runs after the facts of a message are in the log (the effects). */
  onFacts?: (facts: readonly Fact[], message: TimedMessage) => void | Promise<void>;
  inspect?: Observer<InspectionEvent> | ((event: InspectionEvent) => void);
  /**
   * The clock of the machine's own delays. Pass `inertClock` when the delays' firings are
   * journaled as messages (the runtime arms a timer and delivers the \`xstate.after…\` event).
   */
  clock?: MachineClock;
  /** Messages already in the log, re-delivered (without effects) to restore the state. */
  history?: readonly TimedMessage[];
}>;

/** A clock whose timers never fire: delays happen only when their event is delivered as a message. */
type MachineClock = NonNullable<ActorOptions<AnyStateMachine>['clock']>;
export const inertClock: MachineClock = { setTimeout: () => 0, clearTimeout: () => undefined };

export class JournaledActor<TLogic extends AnyStateMachine> {
  private readonly actor;
  private tail: Promise<unknown> = Promise.resolve();
  private broken: JournalBroken | undefined;
  private collecting: Fact[] | undefined;

  constructor(private readonly options: JournaledActorOptions<TLogic>) {
    this.actor = createActor(options.logic, {
      input: options.input,
      ...(options.inspect ? { inspect: options.inspect } : {}),
      ...(options.clock ? { clock: options.clock } : {}),
    });
    this.actor.on('*', (fact: Fact) => this.collecting?.push(fact));
    this.actor.start();
    for (const message of options.history ?? []) this.actor.send(message as never);
  }

  get snapshot(): SnapshotFrom<TLogic> {
    return this.actor.getSnapshot() as SnapshotFrom<TLogic>;
  }

  /** Journals and processes a message; resolves with its facts once they are in the log. */
  deliver(message: TimedMessage): Promise<readonly Fact[]> {
    const run = this.tail.then(() => this.process(message));
    this.tail = run.catch(() => undefined);
    return run;
  }

  private async process(message: TimedMessage): Promise<readonly Fact[]> {
    if (this.broken) throw this.broken;
    const facts: Fact[] = [];
    this.collecting = facts;
    try {
      this.actor.send(message as never);
    } finally {
      this.collecting = undefined;
    }
    try {
      await this.options.store.append(this.options.stream, [
        { type: 'InputDelivered', data: { to: this.options.stream, message }, at: message.at },
        ...facts.map((fact) => ({ ...fact, at: message.at })),
      ]);
    } catch (error) {
      this.broken = new JournalBroken(this.options.stream, error);
      this.actor.stop();
      throw this.broken;
    }
    await this.options.onFacts?.(facts, message);
    return facts;
  }

  stop(): void {
    this.actor.stop();
  }
}
