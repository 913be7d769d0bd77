/**
 * What must hold of a daemon run once it drained, read from its log and from what its
 * receivers got: every accepted input ended with exactly one recorded outcome, and every
 * receiver that stayed to the end of its reply got exactly what the log says was sent (one
 * that left early got a beginning of it). Each check returns its problems, one line each.
 */
import { SCHEDULER_STREAM, type Recorded } from '../../events/index.ts';
import type { ReceivedReply } from './receivedReply.ts';
import { replyByOutputFold, replyByTurnFacts, type ExpectedReply } from './replyExpectations.ts';

/** Scheduler facts that end an input, and the input each ends. */
const endedInput = (event: Recorded): string | undefined =>
  event.type === 'TaskCompleted' ? event.data.taskId : event.type === 'InputShortCircuited' ? event.data.inputId : undefined;

export const outcomeProblems = (events: readonly Recorded[], replies: readonly ReceivedReply[]): string[] => {
  const scheduler = events.filter((e) => e.stream === SCHEDULER_STREAM);
  const queued = scheduler.flatMap((e) => (e.type === 'InputQueued' ? [e.data.inputId] : []));
  const outcomes = new Map<string, string[]>();
  for (const event of scheduler) {
    const inputId = endedInput(event);
    if (inputId !== undefined) outcomes.set(inputId, [...(outcomes.get(inputId) ?? []), `${event.type}@${event.seq}`]);
  }
  const problems: string[] = [];
  for (const inputId of new Set(queued)) {
    const ends = outcomes.get(inputId) ?? [];
    if (ends.length !== 1) problems.push(`input ${inputId} has ${ends.length} outcomes: ${ends.join(', ') || 'none'}`);
  }
  if (queued.length !== new Set(queued).size) problems.push(`an input was queued twice: ${queued.join(', ')}`);
  for (const inputId of outcomes.keys()) if (!queued.includes(inputId)) problems.push(`${inputId} ended but was never queued`);
  for (const reply of replies) {
    if (reply.inputId && !queued.includes(reply.inputId))
      problems.push(`${reply.via} was accepted as ${reply.inputId}, which the log never queued`);
  }
  return problems;
};

const describe = (reply: Pick<ExpectedReply, 'text' | 'end'>): string =>
  `${JSON.stringify(reply.text)} + ${reply.end ? `end(${reply.end.outcome ?? ''} ${JSON.stringify(reply.end.text)})` : 'no end'}`;

const sameEnd = (a: ExpectedReply['end'], b: ExpectedReply['end']): boolean =>
  a === b || (a !== undefined && b !== undefined && a.text === b.text && a.outcome === b.outcome);

export const replyProblems = (events: readonly Recorded[], replies: readonly ReceivedReply[]): string[] => {
  const problems: string[] = [];
  for (const reply of replies) {
    if (!reply.inputId) continue;
    const got: ExpectedReply = { text: reply.chunks.join(''), end: reply.end };
    const name = `${reply.via} (input ${reply.inputId})`;
    if (reply.unexpected.length > 0) problems.push(`${name} got ${reply.unexpected.join(', ')}`);
    const byFold = replyByOutputFold(events, reply.inputId);
    const byFacts = replyByTurnFacts(events, reply.inputId);
    if (!byFold.text.startsWith(got.text))
      problems.push(`${name} got ${describe(got)}, which the output fold never sent: ${describe(byFold)}`);
    if (!reply.end) continue;
    for (const [how, expected] of [
      ['the output fold', byFold],
      ['the turn facts', byFacts],
    ] as const) {
      if (got.text !== expected.text || !sameEnd(got.end, expected.end))
        problems.push(`${name} got ${describe(got)}; ${how} says ${describe(expected)}`);
    }
  }
  return problems;
};
