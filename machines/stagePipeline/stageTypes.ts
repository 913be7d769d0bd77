/** The stage pipeline's vocabulary: stages, the shared stage context, handler changes and outcomes. Plain data only. */

import type { HandlerOutcome, HandlerRef, StageChange, StageName, ToolCall } from '../../events/index.ts';

export { STAGES } from '../../events/index.ts';
export type { HandlerOutcome, HandlerRef, StageChange, StageName, ToolCall };

/** Stages that run around one tool call, where `own_tools` handlers may apply. */
export const TOOL_STAGES: readonly StageName[] = ['before_toolcall', 'after_toolcall'];

/** What every handler of a stage sees; the turn carries it from stage to stage. */
export type StageContext = Readonly<{
  /** The input text (on_input may rewrite it). */
  input: string;
  /** System messages injected for the next LLM call (pre_action). */
  injected: readonly string[];
  /** The LLM's text for this step (post_action). */
  llmText: string | null;
  /** The tool calls the LLM asked for (post_action may replace them). */
  toolCalls: readonly ToolCall[];
  /** The one call about to run (before_toolcall) or just run (after_toolcall). */
  toolCall: ToolCall | null;
  /** Set when a before_toolcall handler denied the call: the call must not run. */
  denial: Readonly<{ handlerId: string; reason: string }> | null;
  /** Set when a before_toolcall handler asked for a person's approval: the call waits for one. */
  approvalAsked?: Readonly<{ handlerId: string; reason: string }> | null;
  /** The handlers that set the tool calls (post_action) or rewrote the call's arguments (before_toolcall), in handler order. */
  callsChangedBy?: readonly string[];
  /** The tool's result text (after_toolcall). */
  toolResult: string | null;
  /** The final text to send (before_output). */
  output: string | null;
  /** An answer given by a handler: the turn jumps to after_output and sends this. */
  response: string | null;
}>;

/** Fields a handler may replace wholesale (which ones, depends on the stage). */
export type SettableFields = Readonly<Partial<Pick<StageContext, 'input' | 'llmText' | 'toolCalls' | 'toolResult' | 'output'>>>;

export type ChangeKey = keyof StageChange;

/** The tool a tool stage runs around, and the plugin that registered it. */
export type ToolScope = Readonly<{ toolName: string; ownerPlugin: string }>;

export type StagePipelineInput = Readonly<{
  stage: StageName;
  context: StageContext;
  /** In registration order: this order, not completion order, decides how changes merge. */
  handlers: readonly HandlerRef[];
  /** How long the stage waits for its handlers, all started at once. */
  timeoutMs: number;
  scope?: ToolScope;
}>;

/** What a handler is asked: the stage, and the context it sees (its own copy). */
export type HandlerInput = Readonly<{ handlerId: string; stage: StageName; context: StageContext }>;

export type StagePipelineOutput = Readonly<{
  stage: StageName;
  /** The context after every change was merged. */
  context: StageContext;
  /** A handler set `response`: the turn goes straight to after_output. */
  shortCircuit: boolean;
  /** One per handler, in handler order. */
  outcomes: readonly HandlerOutcome[];
}>;

/**
 * A stage context with nothing set but the input.
 * @example createStageContext('hi', { toolCall: { id: 'c1', name: 'files_read', args: { path: 'a' } } })
 */
export const createStageContext = (input: string, fields: Partial<StageContext> = {}): StageContext => ({
  input,
  injected: [],
  llmText: null,
  toolCalls: [],
  toolCall: null,
  denial: null,
  toolResult: null,
  output: null,
  response: null,
  ...fields,
});

/** What a handler answers: a change, or nothing for an audit. Checked against the stage when it arrives. */
export type HandlerResolution = StageChange | null | undefined;
