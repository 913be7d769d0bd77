/**
 * The turn's vocabulary: the LLM-facing shapes it needs (structurally compatible with
 * `adapters/llm/llmTypes.ts`, which machines may not import), tool invocations, the messages
 * a turn takes and the facts it emits (both declared in the event catalog). Plain data only.
 */
import type {
  EventNamed,
  LlmAnswer,
  LlmToolCall,
  LlmToolDefinition,
  OutputChannel,
  RegisteredTool,
  SecurityFinding,
  StageHandlers,
  TurnMessage,
} from '../../events/index.ts';
import type { SecretGrant, TurnSandbox } from '../security/index.ts';

export type { LlmAnswer, LlmToolCall, LlmToolDefinition, StageHandlers, TurnMessage };

/** What the model is asked: the runtime adds model, stream and limits to make a CompletionRequest. */
export type LlmCall = Readonly<{ messages: readonly TurnMessage[]; tools: readonly LlmToolDefinition[] }>;

/** One tool call to run, with the args as before_toolcall left them. */
export type ToolInvocation = Readonly<{ callId: string; name: string; owner: string; args: Readonly<Record<string, unknown>> }>;

/**
 * A tool's result. `isError` marks a result that reports a failure to the model; the security
 * proxy adds the secrets it filled, what content review found, and why it refused to run the call.
 */
export type ToolResult = Readonly<{
  content: string;
  isError?: boolean;
  filled?: readonly string[];
  findings?: readonly SecurityFinding[];
  blocked?: boolean;
  refused?: string;
}>;

export type TurnOutcome = EventNamed<'TurnCompleted'>['data']['outcome'];
export type OutputKind = EventNamed<'OutputSent'>['data']['kind'];
export type TurnStopReason = EventNamed<'TurnStopRequested'>['data']['reason'];

export const DEFAULT_MAX_ROUNDS = 8;
export const DEFAULT_STAGE_TIMEOUT_MS = 5_000;

/** What plugins offered a turn: their tools, stage handlers in registration order, and output channels. */
export type Toolset = Readonly<{
  tools: readonly RegisteredTool[];
  handlers: StageHandlers;
  channels: readonly OutputChannel[];
  /** Tools the security policy refused, with why (absent: none). */
  refused?: readonly Readonly<{ name: string; reason: string }>[];
  /** Tools whose every call waits for a person's approval, with why (absent: none). */
  approve?: readonly Readonly<{ name: string; reason: string }>[];
  /**
   * The vault's secrets by name, each with the tools it may be filled into, as the turn began: the
   * turn decides from them which secrets a call gets, before it runs (absent: no firewall, or a
   * log from before, where the proxy's result says what it filled).
   */
  secrets?: readonly SecretGrant[];
  /** Why no secret may be filled into this turn's calls (its input is not from the owner). */
  secretsRefused?: string;
  /** Why no call of this turn may wait for approval (as many calls of its plugin's inputs wait as may): one that would is refused. */
  approvalsRefused?: string;
  /** How many of this turn's calls may wait for approval at once, and why no more: a call past them that would wait is refused. */
  approvalsAtMost?: Readonly<{ calls: number; why: string }>;
  /** The sandbox the turn judges its calls' paths by, as written, before any secret is filled (absent: no firewall). */
  sandbox?: TurnSandbox;
}>;

export const EMPTY_TOOLSET: Toolset = { tools: [], handlers: {}, channels: [] };

/** The messages a turn takes, as the catalog declares them. */
export type TurnInputEvent = EventNamed<
  | 'TurnRequested'
  | 'LlmChunkRecorded'
  | 'LlmAnswerRecorded'
  | 'ToolResultRecorded'
  | 'HandlerResultRecorded'
  | 'StageTimedOut'
  | 'TurnStopRequested'
  | 'ApprovalAnswered'
>;

/** A person's answer to a call waiting for approval, as the turn takes it (the reason reviewed). */
export type ApprovalAnswer = Extract<TurnInputEvent, { type: 'ApprovalAnswered' }>['data'];

/** A turn's message, stamped with the time it was recorded. */
export type TurnInputMessage = TurnInputEvent & Readonly<{ at: number }>;

/** Facts the turn emits for the log. No time: the runtime stamps them with their message's. */
export type TurnFact = EventNamed<
  | 'StageStarted'
  | 'StageRan'
  | 'LlmRequested'
  | 'LlmFailed'
  | 'ToolCallDenied'
  | 'ToolCallRefused'
  | 'SecretFilled'
  | 'ContentFlagged'
  | 'ApprovalRequested'
  | 'ToolCallRewritten'
  | 'ToolCalled'
  | 'ToolCompleted'
  | 'OutputSent'
  | 'TurnCancelled'
  | 'TurnCompleted'
>;
