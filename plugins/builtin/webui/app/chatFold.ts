/**
 * A turn as the chat shows it, folded from its stream's events (pure, no DOM): the input, each
 * tool call with its arguments, result and what the firewall or a stage decided, the approvals
 * it waits for, the answer as the log says it was sent, and how it ended. A failure is shown as
 * a failure, never as the assistant's words.
 */
export type LoggedEvent = Readonly<{ seq: number; stream: string; type: string; at: number; data: unknown }>;

export type ToolStatus = 'awaiting_approval' | 'running' | 'done' | 'failed' | 'refused' | 'denied' | 'refused_by_person';

export type ToolView = {
  callId: string;
  name: string;
  args: unknown;
  status: ToolStatus;
  result?: string;
  /** Why the firewall or a stage refused it, or content review's findings. */
  note?: string;
  approval?: string;
};

export type TurnView = {
  turnId: string;
  /** The scheduler's input id: streamed deliveries name it. */
  taskId: string;
  conversation: string;
  input: string;
  at: number;
  tools: ToolView[];
  /** What was sent, once the log says so. */
  answer?: Readonly<{ text: string; kind: string }>;
  /** What the model sent to an output channel on its own (output_send__CHANNEL), in order. */
  sent: { callId: string; channel: string; text: string }[];
  outcome?: string;
  /** Why a cancelled turn ended: `stop` (a person), `shutdown` (homed stopped), `abandoned` (homed was gone and found it open), `preempted`. */
  cancelReason?: string;
  endedAt?: number;
  /** The last seq folded in. */
  seq: number;
};

type Data = Record<string, unknown>;

/** The kernel's tools that send a message to an output channel (output_send__webui, …). */
const OUTPUT_SEND_PREFIX = 'output_send__';
const str = (value: unknown): string => (typeof value === 'string' ? value : '');

const toolOf = (turn: TurnView, data: Data): ToolView => {
  const callId = str(data.callId);
  let tool = turn.tools.find((t) => t.callId === callId);
  if (!tool) {
    tool = { callId, name: str(data.name), args: data.args ?? {}, status: 'running' };
    turn.tools.push(tool);
  }
  return tool;
};

/** Folds one event into the turn (a new turn on TurnRequested); events of other streams are ignored. */
export const foldTurnEvent = (turn: TurnView | undefined, event: LoggedEvent): TurnView | undefined => {
  const data = (event.data ?? {}) as Data;
  if (event.type === 'TurnRequested') {
    const origin = (data.origin ?? {}) as Data;
    return {
      turnId: str(data.turnId),
      taskId: str(data.taskId),
      conversation: str(origin.conversation) || '(none)',
      input: str(data.input),
      at: event.at,
      tools: [],
      sent: [],
      seq: event.seq,
    };
  }
  if (!turn) return undefined;
  turn.seq = event.seq;
  // A send's result (delivered) says nothing the message does not.
  if (event.type !== 'ToolCalled' && turn.sent.some((s) => s.callId === str(data.callId))) return turn;
  switch (event.type) {
    case 'ApprovalRequested': {
      const tool = toolOf(turn, data);
      tool.args = data.args ?? tool.args;
      tool.status = 'awaiting_approval';
      tool.approval = str(data.approval);
      tool.note = str(data.reason);
      break;
    }
    case 'ToolCalled': {
      const name = str(data.name);
      if (name.startsWith(OUTPUT_SEND_PREFIX)) {
        const args = (data.args ?? {}) as Data;
        turn.sent.push({ callId: str(data.callId), channel: name.slice(OUTPUT_SEND_PREFIX.length), text: str(args.payload) });
        break;
      }
      const tool = toolOf(turn, data);
      tool.args = data.args ?? tool.args;
      // Approved: why it waited is no longer a note (it read as an error beside 'done').
      if (tool.status === 'awaiting_approval') tool.note = undefined;
      tool.status = 'running';
      break;
    }
    case 'ToolResultRecorded': {
      const tool = toolOf(turn, data);
      tool.result = str(data.content);
      tool.status = data.refused ? 'refused' : data.isError ? 'failed' : 'done';
      if (data.refused) tool.note = str(data.refused);
      else if (Array.isArray(data.findings) && data.findings.length > 0) {
        tool.note = `flagged by content review: ${(data.findings as Data[]).map((f) => str(f.rule)).join(', ')}${data.blocked ? ' (withheld)' : ''}`;
      }
      break;
    }
    case 'ToolCallRefused': {
      const tool = toolOf(turn, data);
      tool.status = 'refused';
      tool.note = str(data.reason);
      break;
    }
    case 'ToolCallDenied': {
      const tool = toolOf(turn, data);
      // A person's answer to an approval is recorded as a denial by 'approval', not by a stage handler.
      tool.status = str(data.handlerId) === 'approval' ? 'refused_by_person' : 'denied';
      tool.note = str(data.reason);
      break;
    }
    case 'OutputSent':
      turn.answer = { text: str(data.text), kind: str(data.kind) || 'answer' };
      break;
    case 'TurnCompleted':
      turn.outcome = str(data.outcome);
      turn.endedAt = event.at;
      break;
    case 'TurnCancelled':
      turn.outcome = 'cancelled';
      turn.cancelReason = str(data.reason);
      turn.endedAt = event.at;
      // A call that waited for approval when its reply was stopped never runs: it waits no more.
      for (const tool of turn.tools.filter((t) => t.status === 'awaiting_approval')) {
        tool.status = 'denied';
        tool.note = 'not run: the reply was stopped while it waited for approval';
      }
      break;
  }
  return turn;
};

/** The turns of a list of events (several turns' streams mixed), in the order they started. */
export const foldTurns = (events: readonly LoggedEvent[]): TurnView[] => {
  const turns = new Map<string, TurnView>();
  for (const event of events) {
    if (!event.stream.startsWith('turn-')) continue;
    const next = foldTurnEvent(turns.get(event.stream), event);
    if (next) turns.set(event.stream, next);
  }
  return [...turns.values()];
};

/** Whether the turn is over (its answer is final). */
export const isOver = (turn: TurnView): boolean => turn.outcome !== undefined;

/** A failure is shown as one: the answer's kind, or the turn's outcome, says so. */
export const isFailure = (turn: TurnView): boolean =>
  turn.outcome === 'failed' || turn.answer?.kind === 'failed' || turn.outcome === 'round_limit';

/**
 * A message of the conversation that has no turn yet: queued behind another task (and told so
 * once the agent has been busy a while), or stopped before it started. Its turn replaces it.
 */
export type WaitingInput = {
  inputId: string;
  text: string;
  at: number;
  /** The scheduler told the person it is queued (BacklogAcknowledged). */
  queued: boolean;
  /** A stop or a cancel named it (StopRequested's cancel budget): it will not run. */
  cancelled: boolean;
  /** Why it ended without a turn (stopped before it started), once it did. */
  ended?: string;
};

/** The scheduler's events that say what became of inputs before their turn. */
export const WAITING_EVENT_TYPES = [
  'InputDelivered',
  'BacklogAcknowledged',
  'StopRequested',
  'InputShortCircuited',
  'TaskCompleted',
  'TurnRequested',
] as const;

type ArrivedInput = {
  type?: string;
  input?: { id?: string; source?: string; payload?: { text?: string; conversation?: string | null; resume?: unknown } };
};

/** The input the scheduler's record of an arrival (`InputDelivered` of `input.arrive`) names, if the event is one. */
const arrivedInput = (event: LoggedEvent): ArrivedInput['input'] => {
  if (event.type !== 'InputDelivered') return undefined;
  const message = (event.data as Data | null)?.message as ArrivedInput | undefined;
  return message?.type === 'input.arrive' ? message.input : undefined;
};

/** An input's id and the plugin that took it (`webui`, `cli`, `timer`…), from the scheduler's record of its arrival. */
export const inputSourceOf = (event: LoggedEvent): readonly [string, string] | undefined => {
  const input = arrivedInput(event);
  return input?.id && input.source ? [input.id, input.source] : undefined;
};

/** Who a message is from, as the chat labels it: the person at the cli or this page is `you`; anything else says its source (a reminder is `timer`). */
export const senderOf = (source: string | undefined): string =>
  source === undefined || source === 'webui' || source === 'cli' ? 'you' : source;

/** Folds one event into the conversation `key`'s waiting inputs (a Map by input id, kept in arrival order). */
export const foldWaiting = (waiting: Map<string, WaitingInput>, key: string, event: LoggedEvent): void => {
  const data = (event.data ?? {}) as Data;
  switch (event.type) {
    case 'InputDelivered': {
      const input = arrivedInput(event);
      // An approval's answer resumes a turn that is shown already.
      if (!input?.id || input.payload?.conversation !== key || input.payload.resume !== undefined) return;
      waiting.set(input.id, { inputId: input.id, text: str(input.payload.text), at: event.at, queued: false, cancelled: false });
      return;
    }
    case 'BacklogAcknowledged':
      for (const id of Array.isArray(data.inputIds) ? data.inputIds : []) {
        const input = waiting.get(str(id));
        if (input) input.queued = true;
      }
      return;
    case 'StopRequested':
      for (const id of Array.isArray(data.cancelBudget) ? data.cancelBudget : []) {
        const input = waiting.get(str(id));
        if (input) input.cancelled = true;
      }
      return;
    case 'InputShortCircuited': {
      const input = waiting.get(str(data.inputId));
      if (input) input.ended = 'stopped before it started';
      return;
    }
    case 'TaskCompleted': {
      const input = waiting.get(str(data.taskId));
      if (input && !input.ended)
        input.ended = str(data.outcome) === 'done' ? 'was handled without a turn' : `ended (${str(data.outcome)}) before it started`;
      return;
    }
    case 'TurnRequested':
      waiting.delete(str(data.taskId));
      return;
  }
};
