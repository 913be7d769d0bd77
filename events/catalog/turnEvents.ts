/**
 * One turn of the agent, journaled in its own stream (`turn-<id>`): the messages the turn
 * machine got (the request, streamed pieces and answers of the model, tool results, stage
 * handler results, a stage's timeout, a stop) and, after each, the facts it decided (what to
 * ask the model, which tools to call, what the stages did, what was sent to the user). Replay
 * re-delivers the messages and expects the same facts. What the plugins offered a turn (tools,
 * stage handlers, output channels) is recorded once per distinct set, in `toolsets`.
 */
import { defineEvent, type EventUnion } from '../defineEvent.ts';
import { array, boolean, integer, literal, nonEmptyString, object, optional, record, string, unknown } from '../schema.ts';
import {
  finishReason,
  handlerOutcome,
  llmAnswer,
  llmToolCall,
  outputChannel,
  registeredTool,
  securityFinding,
  stageHandlers,
  stageName,
  turnMessage,
  turnSandbox,
} from './turnParts.ts';

export const TURN_STREAM_PREFIX = 'turn-';
export const TOOLSET_STREAM = 'toolsets';

const outcome = () => literal('answered', 'short_circuited', 'denied', 'round_limit', 'cancelled', 'failed');

/** What the user receives at the end of a turn, marked as what it is: only an `answer` is the model's words. */
export const outputKind = () => literal('answer', 'handler', 'denied', 'round_limit', 'failed', 'cancelled', 'preempted');

/** Why a turn was stopped from outside: the stop button, an interrupt, the daemon stopping, or a daemon that died. */
export const stopReason = () => literal('stop', 'preempted', 'shutdown', 'abandoned');

export const turnEvents = {
  // ── messages: what reached the turn ────────────────────────────────────────────────
  /** The turn's start: its input, the conversation so far, the system prompt, and the toolset it may use. */
  TurnRequested: defineEvent(
    'TurnRequested',
    object({
      turnId: nonEmptyString(),
      /** The scheduler's task this turn runs (absent for `homed chat`). */
      taskId: optional(string()),
      input: string(),
      model: string(),
      maxRounds: integer(),
      stageTimeoutMs: optional(integer()),
      systemPrompt: optional(string()),
      history: optional(array(turnMessage())),
      /** The `ToolsetRecorded` this turn's tools, stage handlers and channels come from. */
      toolset: string(),
      /** Who sent the input (`owner`, `internal`, or a plugin-declared principal); absent in logs before principals. */
      principal: optional(string()),
      /** What content review found in the input (the model is warned beside it; a blocking finding refuses the turn). */
      inputFindings: optional(array(securityFinding())),
      /** Review withheld the input: the turn answers with the notice and asks no model. */
      inputBlocked: optional(boolean()),
      /** Why the input is more than the model's window holds: the turn fails with it and asks no model. */
      inputTooLong: optional(string()),
      /** The conversation the turn acts on and where its replies go: what a turn resumed after a restart needs. */
      origin: optional(object({ conversation: string(), replyChannel: optional(string()), replyTarget: optional(string()) })),
      /** The version of the turn's rules that decide it (TURN_RULES); absent in logs before 2026-12-05, which are decided by rules 1. */
      rules: optional(integer()),
    }),
    {
      schemaVersion: 2,
      // v1 carried its tools inline and is not re-decided by this build (see replayTurn).
      upcasters: [
        {
          from: 1,
          up: (v1: { turnId: string; input: string; model: string; maxRounds: number; systemPrompt?: string; history?: unknown[] }) => ({
            turnId: v1.turnId,
            input: v1.input,
            model: v1.model,
            maxRounds: v1.maxRounds,
            ...(v1.systemPrompt !== undefined ? { systemPrompt: v1.systemPrompt } : {}),
            ...(v1.history ? { history: v1.history } : {}),
            toolset: '',
          }),
        },
      ],
    },
  ),
  /** A piece of a streamed answer, recorded before anyone sees it. */
  LlmChunkRecorded: defineEvent('LlmChunkRecorded', object({ round: integer(), index: integer(), text: string() })),
  /** The model's whole answer to a round (the streamed pieces are a prefix of its text), or why there is none. */
  LlmAnswerRecorded: defineEvent(
    'LlmAnswerRecorded',
    object({ round: integer(), source: optional(string()), answer: optional(llmAnswer()), error: optional(string()) }),
  ),
  /**
   * A tool's result as the security proxy let it through: secret values scrubbed back to their
   * aliases, `filled` the secrets it filled into the arguments, `findings` what content review
   * found, `refused` why the proxy did not run the call (sandbox, an unknown alias).
   */
  ToolResultRecorded: defineEvent(
    'ToolResultRecorded',
    object({
      callId: string(),
      name: string(),
      content: string(),
      isError: optional(boolean()),
      filled: optional(array(string())),
      findings: optional(array(securityFinding())),
      /** Review withheld the content: `content` is the notice the model reads instead. */
      blocked: optional(boolean()),
      refused: optional(string()),
    }),
  ),
  /** A person answered the approval a call waits for (`by`: who answered). */
  ApprovalAnswered: defineEvent(
    'ApprovalAnswered',
    object({
      approval: nonEmptyString(),
      approved: boolean(),
      by: string(),
      reason: optional(string()),
      /** What content review found in the reason; `blocked`: the reason is the notice instead. */
      findings: optional(array(securityFinding())),
      blocked: optional(boolean()),
    }),
  ),
  /** What a stage handler of stage run `run` answered (a change, nothing, or an error), before the stage saw it. */
  HandlerResultRecorded: defineEvent(
    'HandlerResultRecorded',
    object({ run: integer(), handlerId: string(), change: optional(unknown()), error: optional(string()) }),
    {
      schemaVersion: 2,
      upcasters: [{ from: 1, up: (v1: { handlerId: string; change?: unknown; error?: string }) => ({ ...v1, run: -1 }) }],
    },
  ),
  /** Stage run `run` waited its timeout: handlers that did not answer count as timed out. */
  StageTimedOut: defineEvent('StageTimedOut', object({ run: integer() })),
  TurnStopRequested: defineEvent('TurnStopRequested', object({ reason: stopReason() })),

  // ── facts: what the turn decided ───────────────────────────────────────────────────
  /** A stage with handlers to ask began: they are called, and the stage times out after `stageTimeoutMs`. */
  StageStarted: defineEvent(
    'StageStarted',
    object({ run: integer(), stage: stageName(), callId: optional(string()), handlers: array(string()) }),
  ),
  StageRan: defineEvent(
    'StageRan',
    object({ run: integer(), stage: stageName(), shortCircuit: boolean(), callId: optional(string()), outcomes: array(handlerOutcome()) }),
    { schemaVersion: 2, upcasters: [{ from: 1, up: (v1: object) => ({ ...v1, run: -1 }) }] },
  ),
  /**
   * One LLM call. `added` are the messages after the first `from` (which the log already holds:
   * the turn's history, then earlier requests); `total` = from + added.length. With `stream`,
   * the round's pieces reach the user as they are recorded (no handler may change them first).
   */
  LlmRequested: defineEvent(
    'LlmRequested',
    object({ round: integer(), from: integer(), added: array(turnMessage()), total: integer(), stream: boolean() }),
    {
      schemaVersion: 3,
      upcasters: [
        {
          from: 1,
          up: (v1: { round: number; messages: unknown[] }) => ({ round: v1.round, from: 0, added: v1.messages, total: v1.messages.length }),
        },
        {
          from: 2,
          up: (v2: { round: number; from: number; added: unknown[]; total: number }) => ({
            round: v2.round,
            from: v2.from,
            added: v2.added,
            total: v2.total,
            stream: true,
          }),
        },
      ],
    },
  ),
  LlmFailed: defineEvent('LlmFailed', object({ round: integer(), error: string() })),
  /** The security policy or sandbox refused a call; the model is told `reason`. */
  ToolCallRefused: defineEvent('ToolCallRefused', object({ callId: string(), name: string(), reason: string() })),
  /**
   * These secrets (by name) are filled into a call's arguments: decided by the turn and recorded
   * with the call, before the proxy fills them in (in logs from before, recorded with the result).
   * A ToolCallRefused for the same call after it means the proxy refused the call before it ran
   * (a path leading out through a link, or the vault changed since the message came in): no value left.
   */
  SecretFilled: defineEvent('SecretFilled', object({ callId: string(), name: string(), secrets: array(string()) })),
  /** Content review flagged an input or a tool result; `blocked`: the content was withheld from the model. */
  ContentFlagged: defineEvent(
    'ContentFlagged',
    object({ source: literal('input', 'tool_result'), callId: optional(string()), findings: array(securityFinding()), blocked: boolean() }),
  ),
  /** A call waits for a person's approval under id `approval` (answered by ApprovalAnswered). */
  ApprovalRequested: defineEvent(
    'ApprovalRequested',
    object({ approval: nonEmptyString(), callId: string(), name: string(), args: record(unknown()), reason: string() }),
  ),
  ToolCallDenied: defineEvent('ToolCallDenied', object({ callId: string(), name: string(), handlerId: string(), reason: string() })),
  ToolCallRewritten: defineEvent(
    'ToolCallRewritten',
    object({ callId: string(), name: string(), from: record(unknown()), to: record(unknown()) }),
  ),
  /** A tool call is to run now, with these arguments (an output channel's send is delivered by the output actor). */
  ToolCalled: defineEvent('ToolCalled', object({ callId: string(), name: string(), owner: string(), args: record(unknown()) })),
  ToolCompleted: defineEvent('ToolCompleted', object({ callId: string(), name: string(), result: string(), error: optional(string()) })),
  /**
   * What the user receives as the turn's reply, and what it is. `streamed`: the text already
   * reached the user as the model's recorded pieces; otherwise it is delivered whole now. A
   * stopped turn's text is what of its last round had reached the user when it stopped.
   */
  OutputSent: defineEvent('OutputSent', object({ text: string(), kind: outputKind(), streamed: boolean() }), {
    schemaVersion: 2,
    upcasters: [{ from: 1, up: (v1: { text: string }) => ({ text: v1.text, kind: 'answer', streamed: false }) }],
  }),
  TurnCancelled: defineEvent('TurnCancelled', object({ during: string(), reason: stopReason() }), {
    schemaVersion: 2,
    upcasters: [{ from: 1, up: (v1: { during: string }) => ({ during: v1.during, reason: 'stop' }) }],
  }),
  TurnCompleted: defineEvent('TurnCompleted', object({ outcome: outcome(), rounds: integer() })),

  /** The tools, stage handlers and output channels plugins offered, recorded once per distinct set (stream `toolsets`). */
  ToolsetRecorded: defineEvent(
    'ToolsetRecorded',
    object({
      toolset: nonEmptyString(),
      tools: array(registeredTool()),
      handlers: stageHandlers(),
      channels: array(outputChannel()),
      /** Tools the security policy took out, with why: a call to one is answered with the reason. */
      refused: optional(array(object({ name: string(), reason: string() }))),
      /** Tools that run only after a person approves each call, with why. */
      approve: optional(array(object({ name: string(), reason: string() }))),
      /** The vault's secrets by name (never a value), each with the tools it may be filled into. */
      secrets: optional(array(object({ name: string(), tools: array(string()) }))),
      /** Why no secret may be filled into the calls of a turn using this set (its input is not from the owner). */
      secretsRefused: optional(string()),
      /** Why no call of a turn using this set may wait for approval (as many calls of its plugin's inputs wait as may). */
      approvalsRefused: optional(string()),
      /** How many calls of a turn using this set may wait for approval, and why no more (its plugin's inputs have calls waiting). */
      approvalsAtMost: optional(object({ calls: integer(), why: string() })),
      /** The sandbox the turn judges its calls' paths by, as written (the proxy judges them again as they resolve). */
      sandbox: optional(turnSandbox()),
    }),
  ),

  // ── recorded by builds before 2026-12-01, no longer decided (kept so old logs read) ──
  InputAccepted: defineEvent('InputAccepted', object({ input: string() })),
  LlmResponded: defineEvent(
    'LlmResponded',
    object({ round: integer(), text: string(), toolCalls: array(llmToolCall()), finishReason: finishReason() }),
  ),
} as const;

/** The messages of a turn's journal: what reached it, not what it decided. */
export const TURN_INPUT_TYPES = [
  'TurnRequested',
  'LlmChunkRecorded',
  'LlmAnswerRecorded',
  'ToolResultRecorded',
  'HandlerResultRecorded',
  'StageTimedOut',
  'TurnStopRequested',
  'ApprovalAnswered',
] as const satisfies readonly (keyof typeof turnEvents)[];

export type TurnEvent = EventUnion<typeof turnEvents>;
