/** The stage pipeline's vocabulary: stages, the shared stage context, handler changes, outcomes and facts. Plain data only. */

/** The seven hook stages, in the order a turn passes them. */
export const STAGES = [
  'on_input',
  'pre_action',
  'post_action',
  'before_toolcall',
  'after_toolcall',
  'before_output',
  'after_output',
] as const;

export type StageName = (typeof STAGES)[number];

/** Stages that run around one tool call, where `own_tools` handlers may apply. */
export const TOOL_STAGES: readonly StageName[] = ['before_toolcall', 'after_toolcall'];

export type ToolCall = Readonly<{ id: string; name: string; args: Readonly<Record<string, unknown>> }>;

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
  /** The tool's result text (after_toolcall). */
  toolResult: string | null;
  /** The final text to send (before_output). */
  output: string | null;
  /** An answer given by a handler: the turn jumps to after_output and sends this. */
  response: string | null;
}>;

/** Fields a handler may replace wholesale (which ones, depends on the stage). */
export type SettableFields = Readonly<Partial<Pick<StageContext, 'input' | 'llmText' | 'toolCalls' | 'toolResult' | 'output'>>>;

export type Redaction = Readonly<{ find: string; replaceWith: string }>;

/**
 * What one handler asks to change. Handlers run in parallel on the same context, so a change
 * is a patch, never a new context; `mergeChanges` applies the patches of a stage in handler
 * order. An empty change (or none) is an audit: the handler looked and changed nothing.
 */
export type StageChange = Readonly<{
  set?: SettableFields;
  /** System messages to add (pre_action). */
  inject?: readonly string[];
  /** Answer now; the turn short-circuits to after_output. */
  response?: string;
  /** Refuse the tool call (before_toolcall). */
  deny?: Readonly<{ reason: string }>;
  /** Arguments to overwrite on the tool call, key by key (before_toolcall). */
  rewriteArgs?: Readonly<Record<string, unknown>>;
  /** Literal replacements in the tool result, applied after every `set` (after_toolcall). */
  redact?: readonly Redaction[];
}>;

export type ChangeKey = keyof StageChange;

/** A registered handler: `own_tools` handlers see only the tool stages of their plugin's tools. */
export type HandlerRef = Readonly<{ id: string; plugin: string; scope: 'global' | 'own_tools' }>;

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

/** What the `handler` actor receives. */
export type HandlerInput = Readonly<{ handlerId: string; stage: StageName; context: StageContext }>;

export type HandlerStatus = 'changed' | 'unchanged' | 'failed' | 'timed_out' | 'skipped';

export type HandlerOutcome = Readonly<{
  handlerId: string;
  plugin: string;
  status: HandlerStatus;
  /** With `changed`: the change as applied. */
  change?: StageChange;
  /** With `failed`: what went wrong. */
  error?: string;
  /** With `skipped`: why the handler did not run. */
  reason?: string;
}>;

export type StagePipelineOutput = Readonly<{
  stage: StageName;
  /** The context after every change was merged. */
  context: StageContext;
  /** A handler set `response`: the turn goes straight to after_output. */
  shortCircuit: boolean;
  /** One per handler, in handler order. */
  outcomes: readonly HandlerOutcome[];
}>;

type HandlerFactData = { stage: StageName; handlerId: string; plugin: string };

/** Facts the pipeline emits for the log: one per handler outcome, then `StageCompleted`. */
export type StageFact =
  | Readonly<{ type: 'StageHandlerChanged'; data: HandlerFactData & { change: StageChange } }>
  | Readonly<{ type: 'StageHandlerUnchanged'; data: HandlerFactData }>
  | Readonly<{ type: 'StageHandlerFailed'; data: HandlerFactData & { error: string } }>
  | Readonly<{ type: 'StageHandlerTimedOut'; data: HandlerFactData & { timeoutMs: number } }>
  | Readonly<{ type: 'StageHandlerSkipped'; data: HandlerFactData & { reason: string } }>
  | Readonly<{ type: 'StageCompleted'; data: { stage: StageName; shortCircuit: boolean; changedBy: string[] } }>;

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
