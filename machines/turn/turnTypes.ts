/**
 * The turn's vocabulary: the LLM-facing shapes it needs (structurally compatible with
 * `adapters/llm/llmTypes.ts`, which machines may not import), tool invocations, the turn's
 * input and output, and the facts it emits. Plain data only.
 */
import type { HandlerRef, StageName, StagePipelineOutput } from '../stagePipeline/index.ts';
import type { RegisteredTool } from './toolRegistry.ts';

export type TurnRole = 'system' | 'user' | 'assistant' | 'tool';

/** A tool call as the model writes it (`arguments`, like llmTypes' ToolCall). */
export type LlmToolCall = Readonly<{ id: string; name: string; arguments: Record<string, unknown> }>;

export type TurnMessage = Readonly<{
  role: TurnRole;
  content: string;
  toolCalls?: readonly LlmToolCall[];
  toolCallId?: string;
}>;

export type LlmToolDefinition = Readonly<{ name: string; description: string; parameters: Record<string, unknown> }>;

export type LlmFinishReason = 'stop' | 'tool_calls' | 'length' | 'error';

/** What the `llm` actor receives; the runtime adds model, stream and limits to make a CompletionRequest. */
export type LlmCall = Readonly<{ messages: readonly TurnMessage[]; tools: readonly LlmToolDefinition[] }>;

/** What the `llm` actor resolves with (a CompletionResponse is one). */
export type LlmAnswer = Readonly<{
  text: string;
  toolCalls: readonly LlmToolCall[];
  finishReason: LlmFinishReason;
  usage?: Readonly<{ inputTokens: number; outputTokens: number }>;
}>;

/** What the `tool` actor receives: one call, with the args as before_toolcall left them. */
export type ToolInvocation = Readonly<{ callId: string; name: string; owner: string; args: Readonly<Record<string, unknown>> }>;

/** What the `tool` actor resolves with. `isError` marks a result that reports a failure to the model. */
export type ToolResult = Readonly<{ content: string; isError?: boolean }>;

export type TurnOutcome = 'answered' | 'short_circuited' | 'denied' | 'round_limit' | 'cancelled' | 'failed';

export const DEFAULT_MAX_ROUNDS = 8;
export const DEFAULT_STAGE_TIMEOUT_MS = 5_000;

/** Handlers per stage, in registration order (the stage pipeline merges in this order). */
export type StageHandlers = Readonly<Partial<Record<StageName, readonly HandlerRef[]>>>;

export type TurnInput = Readonly<{
  /** The input text as it arrived. */
  input: string;
  /** The conversation before this input (system prompt, context events), already assembled. */
  messages?: readonly TurnMessage[];
  /** The tools this turn may use (`ToolRegistry.list()`): definitions for the model, owners for scopes. */
  tools?: readonly RegisteredTool[];
  handlers?: StageHandlers;
  stageTimeoutMs?: number;
  /** Tool rounds before the turn gives up with 'round_limit'. */
  maxRounds?: number;
}>;

export type TurnOutput = Readonly<{ outcome: TurnOutcome; reply: string; rounds: number; messages: readonly TurnMessage[] }>;

/** Facts the turn emits for the log. No time: the runtime stamps them. */
export type TurnFact =
  | Readonly<{ type: 'InputAccepted'; data: { input: string } }>
  | Readonly<{
      type: 'StageRan';
      data: { stage: StageName; shortCircuit: boolean; callId?: string; outcomes: StagePipelineOutput['outcomes'] };
    }>
  /**
   * One LLM call. `added` are the messages after the first `from` (which the log already holds:
   * the turn's starting conversation, then earlier requests); `total` = from + added.length.
   * `tools` only on round 0, since they do not change within a turn.
   */
  | Readonly<{
      type: 'LlmRequested';
      data: { round: number; from: number; added: readonly TurnMessage[]; total: number; tools?: readonly LlmToolDefinition[] };
    }>
  | Readonly<{
      type: 'LlmResponded';
      data: { round: number; text: string; toolCalls: readonly LlmToolCall[]; finishReason: LlmFinishReason };
    }>
  | Readonly<{ type: 'LlmFailed'; data: { round: number; error: string } }>
  | Readonly<{ type: 'ToolCallDenied'; data: { callId: string; name: string; handlerId: string; reason: string } }>
  | Readonly<{
      type: 'ToolCallRewritten';
      data: { callId: string; name: string; from: Record<string, unknown>; to: Record<string, unknown> };
    }>
  | Readonly<{ type: 'ToolCalled'; data: { callId: string; name: string; owner: string; args: Record<string, unknown> } }>
  | Readonly<{ type: 'ToolCompleted'; data: { callId: string; name: string; result: string; error?: string } }>
  | Readonly<{ type: 'OutputSent'; data: { text: string } }>
  | Readonly<{ type: 'TurnCancelled'; data: { during: string } }>
  | Readonly<{ type: 'TurnCompleted'; data: { outcome: TurnOutcome; rounds: number } }>;

export type TurnFactType = TurnFact['type'];
