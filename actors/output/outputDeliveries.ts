/**
 * What the user receives, folded from committed events: an input's reply route comes from the
 * scheduler's journal, a turn streams the recorded pieces of rounds it decided to stream (and the
 * rest of an answer that came before its last piece was committed), sends a held reply whole,
 * ends each reply with what it was, and delivers output-channel sends. Pure: the same events give
 * the same deliveries; nothing here reads anything but the events.
 */
import { TURN_STREAM_PREFIX, type AnyEvent, type EventNamed, type OutputChannel, type Recorded } from '../../events/index.ts';
import type { SchedulerMessage } from '../../machines/scheduler/index.ts';
import { SHUTDOWN_NOTE } from './replyNotes.ts';
import { OUTPUT_SEND_PREFIX, parseChannelTool, showsProgress, type OutputKind, type TurnStopReason } from '../../machines/turn/index.ts';

export type Route = Readonly<{ channel: string; target: string | null }>;

/**
 * `tool`: a tool started for the reply (`text` is its name), only to channels that show progress.
 * `inputId`: the input the reply answers, when there is one.
 */
/** What a reply was, with its `end`: the turn's output kind, or `blocked` (the security review withheld the input). */
export type DeliveryOutcome = OutputKind | 'blocked';

export type Delivery = Readonly<{
  route: Route;
  kind: 'chunk' | 'end' | 'message' | 'tool';
  text: string;
  outcome?: DeliveryOutcome;
  inputId?: string;
  /** With the `end` of a `cancelled` reply: why it was stopped (a person's stop, the daemon stopping…). */
  stoppedFor?: TurnStopReason;
  /** With a `message` asking a person to approve a call: the approval's id (the reply waits for its answer). */
  approval?: string;
}>;

type TurnOutput = {
  route: Route | null;
  inputId: string | undefined;
  streamingRound: number | null;
  sent: string;
  /** Why the turn was asked to stop, once it was. */
  stoppedFor?: TurnStopReason;
  /** The security review blocked the turn's input (before the model was asked): its reply is the notice, not a refusal of tools. */
  inputBlocked?: boolean;
  modelAsked?: boolean;
};

const forInput = (inputId: string | undefined): { inputId?: string } => (inputId === undefined ? {} : { inputId });

export type OutputState = {
  /** Reply routes of inputs that have not ended. */
  routes: Map<string, Route>;
  /** Turns in progress, by stream. */
  turns: Map<string, TurnOutput>;
  /** Each output channel's tools are known from the toolsets turns use. */
  channels: Map<string, OutputChannel>;
  toolsets: Map<string, readonly OutputChannel[]>;
  /** Where the reply of a turn with no task goes (`homed chat` prints it), by stream. */
  streamRoutes: Map<string, Route>;
  /** The input (an approval's answer) that resumes a parked turn, by the turn's stream. */
  resumes: Map<string, string>;
};

export const emptyOutputState = (): OutputState => ({
  routes: new Map(),
  turns: new Map(),
  channels: new Map(),
  toolsets: new Map(),
  streamRoutes: new Map(),
  resumes: new Map(),
});

/** What a queued input is told when the agent has been busy past the offload time; its reply comes later. */
export const BUSY_NOTE = 'Busy with another task; this message is queued and will be answered after it.';

/** The words that end a reply that is not the model's answer, as the user reads them. */
export const OUTCOME_NOTES: Readonly<Record<OutputKind, string>> = {
  answer: '',
  handler: '',
  denied: '',
  round_limit: '',
  failed: '',
  cancelled: '(cancelled)',
  preempted: '',
};

/** What the person is asked when a call waits for them. */
export const approvalNote = ({ approval, name, args, reason }: EventNamed<'ApprovalRequested'>['data']): string => {
  const shown = JSON.stringify(args);
  const brief = shown.length > 300 ? `${shown.slice(0, 300)}…` : shown;
  return `Approval ${approval}: the agent wants to run ${name} ${brief} (${reason}). Answer /approve ${approval} or /deny ${approval}.`;
};

/**
 * Whether `event` resumes a turn this state does not know: an approval's answer reaching a turn
 * parked before this boot, whose request is then learnt (`learnParkedTurn`) before it is folded
 * (a newcomer approved a call after a restart, and its reply reached no session).
 */
export const resumesUnknownTurn = (state: OutputState, event: Recorded): boolean =>
  event.type === 'ApprovalAnswered' && event.stream.startsWith(TURN_STREAM_PREFIX) && !state.turns.has(event.stream);

/**
 * Learns a turn parked before this boot from its `TurnRequested`, delivering nothing: its reply
 * to come is the reply of the answer that resumes it (its input's reply ended when the daemon
 * stopped), sent where that answer's reply goes, else where the turn recorded its replies go.
 */
export const learnParkedTurn = (state: OutputState, request: Recorded): void => {
  if (request.type !== 'TurnRequested' || state.turns.has(request.stream)) return;
  const by = state.resumes.get(request.stream);
  const { origin } = request.data;
  const recorded = origin?.replyChannel ? { channel: origin.replyChannel, target: origin.replyTarget ?? null } : null;
  const route = (by === undefined ? undefined : state.routes.get(by)) ?? recorded;
  state.turns.set(request.stream, { route, inputId: by ?? request.data.taskId, streamingRound: null, sent: '' });
  for (const channel of state.toolsets.get(request.data.toolset) ?? []) state.channels.set(channel.name, channel);
};

const turnOf = (state: OutputState, event: AnyEvent & { stream: string }): TurnOutput | undefined =>
  event.stream.startsWith(TURN_STREAM_PREFIX) ? state.turns.get(event.stream) : undefined;

/** Applies one committed event; returns what to deliver now, in order. */
export const foldOutput = (state: OutputState, event: Recorded): Delivery[] => {
  switch (event.type) {
    case 'InputDelivered': {
      const message = event.data.message as SchedulerMessage | undefined;
      if (message?.type === 'input.arrive' && message.input.payload?.replyChannel) {
        const { replyChannel, replyTarget } = message.input.payload;
        state.routes.set(message.input.id, { channel: replyChannel, target: replyTarget });
      }
      if (message?.type === 'input.arrive' && message.input.payload?.resume)
        state.resumes.set(message.input.payload.resume.turn, message.input.id);
      return [];
    }
    case 'InputShortCircuited': {
      const route = state.routes.get(event.data.inputId);
      state.routes.delete(event.data.inputId);
      return route ? [{ route, kind: 'end', text: 'stopped before it started', outcome: 'cancelled', inputId: event.data.inputId }] : [];
    }
    case 'TaskCompleted':
      state.routes.delete(event.data.taskId);
      return [];
    case 'BacklogAcknowledged':
      return event.data.inputIds.flatMap((id): Delivery[] => {
        const route = state.routes.get(id);
        return route ? [{ route, kind: 'message', text: BUSY_NOTE, inputId: id }] : [];
      });
    case 'ToolsetRecorded':
      state.toolsets.set(event.data.toolset, event.data.channels);
      return [];
    case 'TurnRequested': {
      const route = (event.data.taskId ? state.routes.get(event.data.taskId) : state.streamRoutes.get(event.stream)) ?? null;
      state.turns.set(event.stream, { route, inputId: event.data.taskId, streamingRound: null, sent: '' });
      for (const channel of state.toolsets.get(event.data.toolset) ?? []) state.channels.set(channel.name, channel);
      return [];
    }
    case 'LlmRequested': {
      const turn = turnOf(state, event);
      if (turn) Object.assign(turn, { streamingRound: event.data.stream ? event.data.round : null, sent: '', modelAsked: true });
      return [];
    }
    case 'LlmChunkRecorded': {
      const turn = turnOf(state, event);
      if (!turn?.route || turn.streamingRound !== event.data.round) return [];
      turn.sent += event.data.text;
      return [{ route: turn.route, kind: 'chunk', text: event.data.text, ...forInput(turn.inputId) }];
    }
    case 'LlmAnswerRecorded': {
      const turn = turnOf(state, event);
      const text = event.data.answer?.text ?? '';
      if (!turn?.route || turn.streamingRound !== event.data.round || !text.startsWith(turn.sent) || text === turn.sent) return [];
      const rest = text.slice(turn.sent.length);
      turn.sent = text;
      return [{ route: turn.route, kind: 'chunk', text: rest, ...forInput(turn.inputId) }];
    }
    case 'ToolCalled': {
      const parsed = event.data.name.startsWith(OUTPUT_SEND_PREFIX) ? parseChannelTool(event.data.name) : undefined;
      if (parsed === undefined) {
        const turn = turnOf(state, event);
        if (!turn?.route || !showsProgress(state.channels.get(turn.route.channel))) return [];
        return [{ route: turn.route, kind: 'tool', text: event.data.name, ...forInput(turn.inputId) }];
      }
      if (parsed.kind !== 'send' || !state.channels.has(parsed.channel)) return [];
      return [{ route: { channel: parsed.channel, target: null }, kind: 'message', text: String(event.data.args.payload ?? '') }];
    }
    case 'ApprovalRequested': {
      const turn = turnOf(state, event);
      return turn?.route
        ? [{ route: turn.route, kind: 'message', text: approvalNote(event.data), approval: event.data.approval, ...forInput(turn.inputId) }]
        : [];
    }
    case 'ContentFlagged': {
      const turn = turnOf(state, event);
      if (turn && !turn.modelAsked && event.data.source === 'input' && event.data.blocked) turn.inputBlocked = true;
      return [];
    }
    case 'TurnStopRequested': {
      const turn = turnOf(state, event);
      if (turn) turn.stoppedFor = event.data.reason;
      return [];
    }
    case 'OutputSent': {
      const turn = turnOf(state, event);
      // The reply is what this says was sent: a piece the model's stream still journals after it (a stop raced a frame) is not.
      if (turn) turn.streamingRound = null;
      if (!turn?.route) return [];
      const { text, kind, streamed } = event.data;
      if (kind === 'preempted') return []; // the task runs again from its input; its reply is still to come
      const id = forInput(turn.inputId);
      const whole: Delivery[] = !streamed && text !== '' && kind !== 'failed' ? [{ route: turn.route, kind: 'chunk', text, ...id }] : [];
      const note = kind === 'failed' ? text : kind === 'cancelled' && turn.stoppedFor === 'shutdown' ? SHUTDOWN_NOTE : OUTCOME_NOTES[kind];
      const why = kind === 'cancelled' && turn.stoppedFor ? { stoppedFor: turn.stoppedFor } : {};
      const outcome = kind === 'denied' && turn.inputBlocked ? 'blocked' : kind;
      return [...whole, { route: turn.route, kind: 'end', text: note, outcome, ...why, ...id }];
    }
    case 'TurnCompleted':
      state.turns.delete(event.stream);
      state.resumes.delete(event.stream);
      return [];
    default:
      return [];
  }
};
