/**
 * Replays an actor's journal: a fresh actor gets every recorded message again, and the facts
 * it emits must equal the recorded facts byte for byte. The first difference is reported
 * with its sequence number, the expected and the actual fact (the way Temporal reports
 * nondeterminism).
 */
import { createActor, type AnyStateMachine, type InputFrom } from 'xstate';
import { encodePayload, type AnyEvent, type EventStore, type RecordedEvent } from '../../events/index.ts';
import type { JournaledActorOptions, TimedMessage } from './journaledActor.ts';

export type ReplayDivergence = Readonly<{
  seq: number;
  expected: AnyEvent | null;
  actual: AnyEvent | null;
}>;

export type JournalReplay<TLogic extends AnyStateMachine> = Readonly<{
  messages: readonly TimedMessage[];
  divergence: ReplayDivergence | null;
  /** The replayed actor's snapshot after the last message (or at the divergence). */
  snapshot: ReturnType<ReturnType<typeof createActor<TLogic>>['getSnapshot']>;
}>;

const sameFact = (a: AnyEvent, b: AnyEvent) => a.type === b.type && encodePayload(a.data).equals(encodePayload(b.data));

/**
 * The first place where what a replay produced differs from what the log recorded, byte for
 * byte; a missing event on either side is a difference too. `afterSeq` numbers an extra fact
 * the log does not hold (default: the last recorded seq).
 */
export const firstDifference = (
  recorded: readonly RecordedEvent[],
  produced: readonly AnyEvent[],
  afterSeq = recorded.at(-1)?.seq ?? 0,
): ReplayDivergence | null => {
  for (let i = 0; i < Math.max(recorded.length, produced.length); i++) {
    const expected = recorded[i];
    const actual = produced[i];
    if (!expected || !actual || !sameFact({ type: expected.type, data: expected.data }, actual)) {
      return {
        seq: expected?.seq ?? afterSeq + 1,
        expected: expected ? { type: expected.type, data: expected.data } : null,
        actual: actual ?? null,
      };
    }
  }
  return null;
};

/** The message a recorded event stands for, or undefined when it is a fact. */
export const messageOf = (event: RecordedEvent, inputTypes: readonly string[] | undefined): TimedMessage | undefined => {
  if (event.type === 'InputDelivered') return (event.data as { message: TimedMessage }).message;
  if (inputTypes?.includes(event.type)) return { type: event.type, data: event.data, at: event.at } as TimedMessage;
  return undefined;
};

/**
 * Re-delivers a journal's recorded messages to a fresh actor and compares the facts it emits
 * after each with the facts recorded after it. `inputTypes`: the declared event types that are
 * messages of this actor (recorded `as-event`); `InputDelivered` always is one.
 */
export const replayEvents = <TLogic extends AnyStateMachine>(options: {
  events: readonly RecordedEvent[];
  logic: TLogic;
  input: InputFrom<TLogic>;
  inputTypes?: readonly string[];
  clock?: JournaledActorOptions<TLogic>['clock'];
}): JournalReplay<TLogic> => {
  const { events, inputTypes } = options;
  const actor = createActor(options.logic, { input: options.input, ...(options.clock ? { clock: options.clock } : {}) });
  let emitted: AnyEvent[] = [];
  actor.on('*', (fact: AnyEvent) => emitted.push(fact));
  actor.start();
  const messages: TimedMessage[] = [];
  let divergence: ReplayDivergence | null = null;

  for (let i = 0; i < events.length && !divergence; ) {
    const input = events[i]!;
    const message = messageOf(input, inputTypes);
    if (!message) {
      divergence = { seq: input.seq, expected: { type: input.type, data: input.data }, actual: null };
      break;
    }
    let j = i + 1;
    while (j < events.length && !messageOf(events[j]!, inputTypes)) j++;
    messages.push(message);
    emitted = [];
    actor.send(message as never);
    divergence = firstDifference(events.slice(i + 1, j), emitted, events[j - 1]!.seq);
    i = j;
  }
  const snapshot = actor.getSnapshot();
  actor.stop();
  return { messages, divergence, snapshot };
};

export const replayJournal = async <TLogic extends AnyStateMachine>(options: {
  store: EventStore;
  stream: string;
  logic: TLogic;
  input: InputFrom<TLogic>;
  inputTypes?: readonly string[];
  /** Stop after this global sequence number. */
  untilSeq?: number;
  /** The clock of the machine's delays; `inertClock` when their firings are journaled messages. */
  clock?: JournaledActorOptions<TLogic>['clock'];
}): Promise<JournalReplay<TLogic>> => {
  const recorded = await options.store.readStream(options.stream);
  const events = recorded.filter((e) => options.untilSeq === undefined || e.seq <= options.untilSeq);
  return replayEvents({ ...options, events });
};
