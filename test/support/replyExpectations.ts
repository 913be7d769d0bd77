/**
 * What the log says the receiver of one input was sent, worked out two ways: from the facts of
 * the input's turns (the streamed rounds' recorded pieces, then what `OutputSent` says), and
 * by the output actor's own pure fold (`foldOutput`) over the boot the input arrived in, as
 * the output actor folds it. Both name the reply by the input's id.
 */
import { KERNEL_STREAM, SCHEDULER_STREAM, type Recorded } from '../../events/index.ts';
import { emptyOutputState, foldOutput, OUTCOME_NOTES } from '../../actors/output/outputDeliveries.ts';
import { SHUTDOWN_NOTE } from '../../actors/output/replyNotes.ts';
import type { OutputKind } from '../../machines/turn/index.ts';
import type { InputPayload, SchedulerMessage } from '../../machines/scheduler/index.ts';
import type { ReplyEnd } from './receivedReply.ts';
import { turnRecords, type TurnRecord } from './turnRecords.ts';

export type ExpectedReply = Readonly<{ text: string; end: ReplyEnd | undefined }>;

type Arrival = Readonly<{ seq: number; payload: InputPayload | undefined }>;

const arrivalOf = (events: readonly Recorded[], inputId: string): Arrival | undefined => {
  for (const event of events) {
    if (event.type !== 'InputDelivered' || event.stream !== SCHEDULER_STREAM) continue;
    const message = event.data.message as SchedulerMessage;
    if (message.type === 'input.arrive' && message.input.id === inputId) return { seq: event.seq, payload: message.input.payload };
  }
  return undefined;
};

/** What one turn put in front of its receiver: the pieces of its streamed rounds, and its output unless streamed. */
const textOfTurn = (turn: TurnRecord): string => {
  const streamed = turn.rounds.filter((r) => r.streamed).map((r) => r.answer ?? r.pieces.join(''));
  const output = turn.output;
  if (!output || output.kind === 'preempted') return streamed.join('');
  if (output.streamed) {
    const last = streamed.at(-1);
    // The output says it went out as the last streamed round: it must be that round's text.
    if (last !== output.text) return `${streamed.join('')}⟨OutputSent says it streamed ${JSON.stringify(output.text)}⟩`;
    return streamed.join('');
  }
  const whole = output.text !== '' && output.kind !== 'failed' ? output.text : '';
  return streamed.join('') + whole;
};

const endOfTurn = (turn: TurnRecord | undefined): ReplyEnd | undefined => {
  const output = turn?.output;
  if (!output || output.kind === 'preempted') return undefined;
  // A turn cancelled because homed stopped says so.
  if (output.kind === 'cancelled' && turn?.stopReason === 'shutdown') return { text: SHUTDOWN_NOTE, outcome: output.kind };
  return { text: output.kind === 'failed' ? output.text : OUTCOME_NOTES[output.kind as OutputKind], outcome: output.kind };
};

/** From the facts: the input's turns in order (a preempted one, then the one that resumed it), or its short circuit. */
export const replyByTurnFacts = (events: readonly Recorded[], inputId: string): ExpectedReply => {
  const shortCircuited = events.some((e) => e.type === 'InputShortCircuited' && e.data.inputId === inputId);
  const turns = turnRecords(events).filter((t) => t.taskId === inputId);
  // What the user reads when a stop cancelled their input before it started.
  if (shortCircuited && turns.length === 0) return { text: '', end: { text: 'stopped before it started', outcome: 'cancelled' } };
  return { text: turns.map(textOfTurn).join(''), end: endOfTurn(turns.at(-1)) };
};

const bootStarts = (events: readonly Recorded[]): number[] =>
  events
    .filter((e) => e.stream === KERNEL_STREAM && e.type === 'InputDelivered' && (e.data.message as { type?: string }).type === 'boot')
    .map((e) => e.seq);

/** From the output actor's fold, over the boot the input arrived in (the actor starts at its boot and learns the toolsets before). */
export const replyByOutputFold = (events: readonly Recorded[], inputId: string): ExpectedReply => {
  const arrival = arrivalOf(events, inputId);
  if (!arrival?.payload?.replyChannel) return { text: '', end: undefined };
  const starts = bootStarts(events);
  const from = starts.findLast((seq) => seq <= arrival.seq) ?? 0;
  const to = starts.find((seq) => seq > arrival.seq) ?? Number.POSITIVE_INFINITY;
  const state = emptyOutputState();
  for (const event of events) if (event.seq < from && event.type === 'ToolsetRecorded') foldOutput(state, event);
  const { replyChannel, replyTarget } = arrival.payload;
  let text = '';
  let end: ReplyEnd | undefined;
  for (const event of events) {
    if (event.seq < from || event.seq >= to) continue;
    for (const delivery of foldOutput(state, event)) {
      if (delivery.route.channel !== replyChannel || delivery.route.target !== replyTarget || end) continue;
      if (delivery.kind === 'chunk') text += delivery.text;
      else if (delivery.kind === 'end') end = { text: delivery.text, outcome: delivery.outcome };
    }
  }
  return { text, end };
};
