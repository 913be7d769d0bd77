/**
 * Where a turn stands between two messages: its phase, the conversation it has built, the stage
 * runs it waits for, the tool calls of the current round, and what it will send. Plain data,
 * so a snapshot of it can be inspected and compared. Pure.
 */
import { createStageContext, type StageContext, type StageRun, type ToolCall } from '../stagePipeline/index.ts';
import { channelTools, OUTPUT_SEND_PREFIX } from './outputChannels.ts';
import type { LlmAnswer, OutputKind, Toolset, TurnMessage, TurnOutcome, TurnStopReason } from './turnTypes.ts';
import type { RegisteredTool } from '../../events/index.ts';

export const TURN_PHASES = [
  'waiting',
  'on_input',
  'pre_action',
  'llm',
  'post_action',
  'tools',
  'before_output',
  'after_output',
  'done',
] as const;

export type TurnPhase = (typeof TURN_PHASES)[number];

/** Who waits for a stage run: the turn itself, or one tool call's before/after stage. */
export type RunOwner = Readonly<{ kind: 'turn' }> | Readonly<{ kind: 'call'; index: number; side: 'before' | 'after' }>;

export type OpenRun = Readonly<{ run: StageRun; owner: RunOwner }>;

export type CallPhase = 'before' | 'approval' | 'running' | 'after' | 'done';

export type CallState = Readonly<{
  call: ToolCall;
  owner: string | null;
  phase: CallPhase;
  denied: boolean;
  /** The text the model will see. */
  result: string;
  /** A handler answered in a tool stage: the turn short-circuits with this. */
  response: string | null;
  /** The id of the approval the call waits for (phase `approval`). */
  approval?: string;
  /** The secrets the model's own call named by alias: the only ones it may have filled in (a handler is not the owner). */
  named?: readonly string[];
  /** A post_action handler added the call or put it in place of the model's: how, and the handlers that set the calls. */
  madeBy?: Readonly<{ how: 'added' | 'replaced'; handlers: readonly string[] }>;
}>;

/**
 * The rules this build decides a turn by; a turn's TurnRequested names the version it began
 * under (absent: 1), so a recorded turn replays by its own.
 *   1: a stopped reply is sent as ''.
 *   2: a stopped reply is sent as what the person already holds of it.
 *   3: a call a stage handler of another plugin than the tool's made (added or put in place of the
 *      model's by post_action, or its arguments rewritten by before_toolcall) waits for the person's approval.
 */
export const TURN_RULES = 3;

export type TurnRequest = Readonly<{
  turnId: string;
  /** The version of the rules deciding this turn. */
  rules: number;
  taskId?: string;
  input: string;
  model: string;
  maxRounds: number;
  stageTimeoutMs: number;
}>;

export type TurnState = Readonly<{
  phase: TurnPhase;
  request: TurnRequest | null;
  toolset: Toolset;
  /** The plugins' tools and each channel's two tools: what the model may call. */
  tools: readonly RegisteredTool[];
  /** What the stages saw last and changed. */
  stage: StageContext;
  messages: readonly TurnMessage[];
  /** Messages the log already holds (the history in TurnRequested, then each LlmRequested's). */
  recordedCount: number;
  /** The model's answer of this round, as post_action left it. */
  answer: LlmAnswer | null;
  /** Text of this round's recorded pieces. */
  streamed: string;
  /** No post_action or before_output handler can change the model's text: its pieces go to the user as recorded. */
  streaming: boolean;
  /** Tool rounds run so far. */
  rounds: number;
  nextRun: number;
  runs: readonly OpenRun[];
  calls: readonly CallState[];
  outcome: TurnOutcome | null;
  /** What the turn will send (its kind is known before before_output may rewrite the text). */
  output: Readonly<{ text: string; kind: OutputKind }> | null;
  stopped: TurnStopReason | null;
  /** What the model is told beside the input when content review flagged it. */
  inputWarning: string | null;
}>;

/**
 * The tools a turn offers the model: each output channel's two (but those the security policy
 * refused: a channel's tools are tools like any other) and the plugins' tools the policy let through.
 */
export const offeredTools = (toolset: Toolset): RegisteredTool[] => {
  const refused = new Set((toolset.refused ?? []).map((r) => r.name));
  return [...channelTools(toolset.channels).filter((t) => !refused.has(t.name)), ...toolset.tools];
};

/** The output channels a turn may send on (the names of those whose send tool it offers), for its system prompt. */
export const offeredChannels = (toolset: Toolset): string[] => {
  const refused = new Set((toolset.refused ?? []).map((r) => r.name));
  return toolset.channels.filter((c) => !refused.has(`${OUTPUT_SEND_PREFIX}${c.name}`)).map((c) => c.name);
};

export const initialTurnState = (toolset: Toolset): TurnState => ({
  phase: 'waiting',
  request: null,
  toolset,
  tools: offeredTools(toolset),
  stage: createStageContext(''),
  messages: [],
  recordedCount: 0,
  answer: null,
  streamed: '',
  streaming: !(toolset.handlers.post_action?.length || toolset.handlers.before_output?.length),
  rounds: 0,
  nextRun: 0,
  runs: [],
  calls: [],
  outcome: null,
  output: null,
  stopped: null,
  inputWarning: null,
});

/** The turn can go on only when a person answers: every call of the round is done or waits for approval, and one waits. */
export const awaitsApproval = (state: TurnState): boolean =>
  state.phase === 'tools' &&
  state.runs.length === 0 &&
  state.calls.some((c) => c.phase === 'approval') &&
  state.calls.every((c) => c.phase === 'approval' || c.phase === 'done');

/** The approvals a turn waits for, with what each would run. */
export const pendingApprovals = (
  state: TurnState,
): Readonly<{ approval: string; callId: string; name: string; args: Readonly<Record<string, unknown>> }>[] =>
  state.calls.flatMap((c) =>
    c.phase === 'approval' && c.approval ? [{ approval: c.approval, callId: c.call.id, name: c.call.name, args: c.call.args }] : [],
  );
