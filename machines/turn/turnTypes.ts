/**
 * The turn's vocabulary: the LLM-facing shapes it needs (structurally compatible with
 * `adapters/llm/llmTypes.ts`, which machines may not import), tool invocations, the turn's
 * input and output, and the facts it emits. Plain data only.
 */
import type {
  EventNamed,
  StageHandlers,
  LlmAnswer,
  LlmToolCall,
  LlmToolDefinition,
  RegisteredTool,
  TurnMessage,
} from '../../events/index.ts';

export type { LlmAnswer, LlmToolCall, LlmToolDefinition, TurnMessage };

export type TurnRole = TurnMessage['role'];

export type LlmFinishReason = LlmAnswer['finishReason'];

/** What the `llm` actor receives; the runtime adds model, stream and limits to make a CompletionRequest. */
export type LlmCall = Readonly<{ messages: readonly TurnMessage[]; tools: readonly LlmToolDefinition[] }>;

/** What the `tool` actor receives: one call, with the args as before_toolcall left them. */
export type ToolInvocation = Readonly<{ callId: string; name: string; owner: string; args: Readonly<Record<string, unknown>> }>;

/** What the `tool` actor resolves with. `isError` marks a result that reports a failure to the model. */
export type ToolResult = Readonly<{ content: string; isError?: boolean }>;

export type TurnOutcome = 'answered' | 'short_circuited' | 'denied' | 'round_limit' | 'cancelled' | 'failed';

export const DEFAULT_MAX_ROUNDS = 8;
export const DEFAULT_STAGE_TIMEOUT_MS = 5_000;

/** Handlers per stage, in registration order (the stage pipeline merges in this order). */
export type { StageHandlers };

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

/** Facts the turn emits for the log (declared in the event catalog). No time: the runtime stamps them. */
export type TurnFact = EventNamed<
  | 'InputAccepted'
  | 'StageRan'
  | 'LlmRequested'
  | 'LlmResponded'
  | 'LlmFailed'
  | 'ToolCallDenied'
  | 'ToolCallRewritten'
  | 'ToolCalled'
  | 'ToolCompleted'
  | 'OutputSent'
  | 'TurnCancelled'
  | 'TurnCompleted'
>;

export type TurnFactType = TurnFact['type'];
