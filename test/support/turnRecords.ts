/** What the log says about each turn, read from its `turn-<id>` stream: its task, its model rounds, its tool calls, what it sent, whether it ended. */
import { TURN_STREAM_PREFIX, type Recorded } from '../../events/index.ts';

export type TurnRound = {
  readonly round: number;
  /** LlmRequested said its pieces go to the user as they are recorded. */
  readonly streamed: boolean;
  readonly pieces: string[];
  answer: string | undefined;
  failed: boolean;
};

export type TurnRecord = {
  readonly stream: string;
  readonly taskId: string | undefined;
  readonly rounds: TurnRound[];
  /** Tool calls asked for (ToolCalled) and not answered (ToolResultRecorded), by call id → tool name. */
  readonly openToolCalls: Map<string, string>;
  cancelled: boolean;
  /** Why the turn was asked to stop, when it was. */
  stopReason: string | undefined;
  output: Readonly<{ text: string; kind: string; streamed: boolean }> | undefined;
  completed: boolean;
};

/** The turns of `events`, in the order they were requested. */
export const turnRecords = (events: readonly Recorded[]): TurnRecord[] => {
  const turns = new Map<string, TurnRecord>();
  for (const event of events) {
    if (!event.stream.startsWith(TURN_STREAM_PREFIX)) continue;
    if (event.type === 'TurnRequested') {
      const { taskId } = event.data;
      turns.set(event.stream, {
        stream: event.stream,
        taskId,
        rounds: [],
        openToolCalls: new Map(),
        cancelled: false,
        stopReason: undefined,
        output: undefined,
        completed: false,
      });
      continue;
    }
    const turn = turns.get(event.stream);
    if (!turn) continue;
    const round = (n: number) => turn.rounds.find((r) => r.round === n);
    switch (event.type) {
      case 'LlmRequested':
        turn.rounds.push({ round: event.data.round, streamed: event.data.stream, pieces: [], answer: undefined, failed: false });
        break;
      case 'LlmChunkRecorded':
        round(event.data.round)?.pieces.push(event.data.text);
        break;
      case 'LlmAnswerRecorded': {
        const answered = round(event.data.round);
        if (!answered) break;
        if (event.data.answer) answered.answer = event.data.answer.text;
        else answered.failed = true;
        break;
      }
      case 'ToolCalled':
        turn.openToolCalls.set(event.data.callId, event.data.name);
        break;
      case 'ToolResultRecorded':
        turn.openToolCalls.delete(event.data.callId);
        break;
      case 'TurnCancelled':
        turn.cancelled = true;
        break;
      case 'TurnStopRequested':
        turn.stopReason = event.data.reason;
        break;
      case 'OutputSent':
        turn.output = event.data;
        break;
      case 'TurnCompleted':
        turn.completed = true;
        break;
      default:
        break;
    }
  }
  return [...turns.values()];
};

/** The round a turn waits on the model for, if it does. */
export const roundAwaitingModel = (turn: TurnRecord): TurnRound | undefined => {
  const last = turn.rounds.at(-1);
  return last && !turn.cancelled && !turn.output && last.answer === undefined && !last.failed ? last : undefined;
};
