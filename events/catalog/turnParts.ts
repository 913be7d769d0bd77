/**
 * The shapes a turn's events carry — the conversation, tool calls and definitions, stage
 * handlers and what they changed — declared once as schemas; the turn machine's types are
 * inferred from them. Pure.
 */
import {
  array,
  boolean,
  integer,
  literal,
  nonEmptyString,
  object,
  oneOf,
  optional,
  record,
  string,
  unknown,
  type Infer,
} from '../schema.ts';

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

export const stageName = () => literal(...STAGES);

const args = () => record(unknown());

/** A tool call as the model writes it. */
export const llmToolCall = () => object({ id: string(), name: string(), arguments: args() });

export const turnMessage = () =>
  object({
    role: literal('system', 'user', 'assistant', 'tool'),
    content: string(),
    toolCalls: optional(array(llmToolCall())),
    toolCallId: optional(string()),
  });

/** What content review found, by rule and count: never the matched text (the log holds findings). */
export const FINDING_RULES = ['sensitive_word', 'injection.instruction', 'injection.hidden_text', 'injection.reveal_secret'] as const;

export const securityFinding = () => object({ rule: literal(...FINDING_RULES), count: integer(), words: optional(array(integer())) });

export const llmToolDefinition = () => object({ name: string(), description: string(), parameters: args() });

/** Which of a tool's arguments hold a path it reads, a path it writes, a host it connects to: what the sandbox checks. */
export const toolAccess = () =>
  object({ read: optional(array(string())), write: optional(array(string())), network: optional(array(string())) });

/** The sandbox a turn judges its calls' paths by, as written: the rules, where relative paths and `~` lead, and the daemon's own files. */
export const turnSandbox = () =>
  object({
    rules: object({
      read: optional(array(string())),
      write: optional(array(string())),
      network: optional(oneOf(boolean(), array(string()))),
      loopback: optional(boolean()),
    }),
    base: object({ cwd: string(), home: string() }),
    protectedPaths: array(string()),
    // The data dir is the daemon's too, but for the folders inside it that are roots (logs before these came judge by protectedPaths alone).
    dataDir: optional(string()),
    openInside: optional(array(string())),
  });

export const registeredTool = () =>
  object({
    name: nonEmptyString(),
    description: string(),
    parameters: args(),
    owner: string(),
    origin: literal('plugin', 'builtin', 'memory'),
    access: optional(toolAccess()),
  });

export const handlerRef = () => object({ id: nonEmptyString(), plugin: string(), scope: literal('global', 'own_tools') });

export const stageHandlers = () =>
  object({
    on_input: optional(array(handlerRef())),
    pre_action: optional(array(handlerRef())),
    post_action: optional(array(handlerRef())),
    before_toolcall: optional(array(handlerRef())),
    after_toolcall: optional(array(handlerRef())),
    before_output: optional(array(handlerRef())),
    after_output: optional(array(handlerRef())),
  });

export const outputChannel = () => object({ name: nonEmptyString(), owner: string(), capabilities: integer(), metaDoc: string() });

/** A tool call as the stages see it (`args`, not `arguments`). */
export const stageToolCall = () => object({ id: string(), name: string(), args: args() });

export const stageChange = () =>
  object({
    set: optional(
      object({
        input: optional(string()),
        llmText: optional(string()),
        toolCalls: optional(array(stageToolCall())),
        toolResult: optional(string()),
        output: optional(string()),
      }),
    ),
    inject: optional(array(string())),
    response: optional(string()),
    deny: optional(object({ reason: string() })),
    /** before_toolcall: the call waits for a person's approval (the reason is shown to them). */
    askApproval: optional(object({ reason: string() })),
    rewriteArgs: optional(args()),
    redact: optional(array(object({ find: string(), replaceWith: string() }))),
  });

export const handlerOutcome = () =>
  object({
    handlerId: string(),
    plugin: string(),
    status: literal('changed', 'unchanged', 'failed', 'timed_out', 'skipped'),
    change: optional(stageChange()),
    error: optional(string()),
    reason: optional(string()),
  });

export const finishReason = () => literal('stop', 'tool_calls', 'length', 'error');

export const llmAnswer = () =>
  object({
    text: string(),
    toolCalls: array(llmToolCall()),
    finishReason: finishReason(),
    usage: optional(object({ inputTokens: integer(), outputTokens: integer() })),
  });

export type StageName = (typeof STAGES)[number];
export type LlmToolCall = Infer<ReturnType<typeof llmToolCall>>;
export type TurnMessage = Infer<ReturnType<typeof turnMessage>>;
export type LlmToolDefinition = Infer<ReturnType<typeof llmToolDefinition>>;
export type ToolAccess = Infer<ReturnType<typeof toolAccess>>;
export type SecurityFinding = Infer<ReturnType<typeof securityFinding>>;
export type RegisteredTool = Infer<ReturnType<typeof registeredTool>>;
export type HandlerRef = Infer<ReturnType<typeof handlerRef>>;
export type StageHandlers = Infer<ReturnType<typeof stageHandlers>>;
export type OutputChannel = Infer<ReturnType<typeof outputChannel>>;
export type ToolCall = Infer<ReturnType<typeof stageToolCall>>;
export type StageChange = Infer<ReturnType<typeof stageChange>>;
export type HandlerOutcome = Infer<ReturnType<typeof handlerOutcome>>;
export type LlmAnswer = Infer<ReturnType<typeof llmAnswer>>;
