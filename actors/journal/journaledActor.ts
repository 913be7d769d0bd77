/**
 * The one journal every deciding actor runs through: each message is appended together with
 * the facts the actor emitted while processing it (one atomic append), and only then are the
 * facts handed to the effects. Messages are processed one at a time, in the order delivered.
 * A message is recorded as `InputDelivered` or, for actors whose messages are declared event
 * types (the turn), as itself. A message that changes neither the actor's state nor emits a
 * fact is not recorded: replaying without it gives the same state, so nothing is lost; nor is
 * a message to an actor that reached its final state.
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
import type { EventStore, IdSource } from '../../events/index.ts';
import { Journal, type Fact, type MessageRecording, type TimedMessage } from './journal.ts';

export { JournalBroken, recordedMessage, type Fact, type MessageRecording, type TimedMessage } from './journal.ts';

export type JournaledActorOptions<TLogic extends AnyStateMachine> = Readonly<{
  store: EventStore;
  /** The stream its inputs and facts go to; also the actor's name in `InputDelivered.to`. */
  stream: string;
  logic: TLogic;
  input: InputFrom<TLogic>;
  /** `as-event`: each message is a declared event (`{ type, data, at }`) and is recorded as it is. Default `InputDelivered`. */
  recording?: MessageRecording;
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
  /** Ids for the recorded messages: with them, each fact names the message that caused it (`causation`). */
  ids?: IdSource;
  /** Shared by every event the actor appends: the one piece of work it is (a boot, a turn). */
  correlation?: string;
}>;

/** A clock whose timers never fire: delays happen only when their event is delivered as a message. */
type MachineClock = NonNullable<ActorOptions<AnyStateMachine>['clock']>;
export const inertClock: MachineClock = { setTimeout: () => 0, clearTimeout: () => undefined };

type MachineSnapshot = Readonly<{ context: unknown; value: unknown; status: string }>;

const sameValue = (a: unknown, b: unknown): boolean => a === b || JSON.stringify(a) === JSON.stringify(b);

export class JournaledActor<TLogic extends AnyStateMachine> {
  private readonly actor;
  private readonly journal: Journal;
  private collecting: Fact[] | undefined;

  constructor(private readonly options: JournaledActorOptions<TLogic>) {
    this.journal = new Journal(options.store, options.stream, options.recording, {
      ...(options.ids ? { ids: options.ids } : {}),
      ...(options.correlation !== undefined ? { correlation: options.correlation } : {}),
    });
    this.actor = createActor(options.logic, {
      // Named by its stream: what the log, the machines view and the inspector call it.
      id: options.stream,
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

  /** Journals and processes a message; resolves with its facts once they are in the log (none for a message that changed nothing). */
  deliver(message: TimedMessage): Promise<readonly Fact[]> {
    return this.journal.serially(() => this.process(message));
  }

  /** Resolves when every message delivered so far has been processed. */
  settled(): Promise<void> {
    return this.journal.settled();
  }

  private async process(message: TimedMessage): Promise<readonly Fact[]> {
    this.journal.assertWhole();
    const before = this.actor.getSnapshot() as MachineSnapshot;
    if (before.status !== 'active') return [];
    const facts: Fact[] = [];
    this.collecting = facts;
    try {
      this.actor.send(message as never);
    } finally {
      this.collecting = undefined;
    }
    const after = this.actor.getSnapshot() as MachineSnapshot;
    if (facts.length === 0 && after.context === before.context && sameValue(after.value, before.value) && after.status === before.status) {
      return facts;
    }
    try {
      await this.journal.record(message, facts);
    } catch (error) {
      this.actor.stop();
      throw error;
    }
    await this.options.onFacts?.(facts, message);
    return facts;
  }

  stop(): void {
    this.actor.stop();
  }
}
