/**
 * One turn of the agent: the request that started it, the facts the turn machine emitted,
 * and the results of its effects (LLM answers), recorded so that replay feeds them back
 * instead of calling the model. Stream: `turn-<id>`. Payload parts that mirror the model's
 * conversation are kept as plain data (`unknown` here; the machine's types describe them).
 */
import { defineEvent, type EventUnion } from '../defineEvent.ts';
import { array, boolean, integer, literal, nonEmptyString, object, optional, record, string, unknown } from '../schema.ts';
import {
  finishReason,
  handlerOutcome,
  llmAnswer,
  llmToolCall,
  llmToolDefinition,
  outputChannel,
  registeredTool,
  stageHandlers,
  stageName,
  turnMessage,
} from './turnParts.ts';

export const TURN_STREAM_PREFIX = 'turn-';

const outcome = () => literal('answered', 'short_circuited', 'denied', 'round_limit', 'cancelled', 'failed');

export const turnEvents = {
  TurnRequested: defineEvent(
    'TurnRequested',
    object({
      turnId: nonEmptyString(),
      input: string(),
      model: string(),
      maxRounds: integer(),
      systemPrompt: optional(string()),
      history: optional(array(turnMessage())),
      channels: optional(array(outputChannel())),
      /** Tools from plugins this turn could use, and the stage handlers it ran (for replay). */
      tools: optional(array(registeredTool())),
      handlers: optional(stageHandlers()),
    }),
  ),
  InputAccepted: defineEvent('InputAccepted', object({ input: string() })),
  StageRan: defineEvent(
    'StageRan',
    object({ stage: stageName(), shortCircuit: boolean(), callId: optional(string()), outcomes: array(handlerOutcome()) }),
  ),
  /** v2 records only the messages added since the log last held the conversation (v1 held all of it, every round). */
  LlmRequested: defineEvent(
    'LlmRequested',
    object({
      round: integer(),
      from: integer(),
      added: array(turnMessage()),
      total: integer(),
      tools: optional(array(llmToolDefinition())),
    }),
    {
      schemaVersion: 2,
      upcasters: [
        {
          from: 1,
          up: (v1: { round: number; messages: unknown[]; tools: unknown }) => ({
            round: v1.round,
            from: 0,
            added: v1.messages,
            total: v1.messages.length,
            tools: v1.tools,
          }),
        },
      ],
    },
  ),
  LlmAnswerRecorded: defineEvent(
    'LlmAnswerRecorded',
    object({ round: integer(), source: optional(string()), answer: optional(llmAnswer()), error: optional(string()) }),
  ),
  /** A piece of a streamed answer, recorded before it was shown; the whole answer follows as LlmAnswerRecorded. */
  LlmChunkRecorded: defineEvent('LlmChunkRecorded', object({ round: integer(), index: integer(), text: string() })),
  ToolResultRecorded: defineEvent(
    'ToolResultRecorded',
    object({ callId: string(), name: string(), content: string(), isError: optional(boolean()) }),
  ),
  /** What a stage handler answered (a change, nothing, or an error), before the stage saw it. */
  HandlerResultRecorded: defineEvent(
    'HandlerResultRecorded',
    object({ handlerId: string(), stage: stageName(), occurrence: integer(), change: optional(unknown()), error: optional(string()) }),
  ),
  LlmResponded: defineEvent(
    'LlmResponded',
    object({ round: integer(), text: string(), toolCalls: array(llmToolCall()), finishReason: finishReason() }),
  ),
  LlmFailed: defineEvent('LlmFailed', object({ round: integer(), error: string() })),
  ToolCallDenied: defineEvent('ToolCallDenied', object({ callId: string(), name: string(), handlerId: string(), reason: string() })),
  ToolCallRewritten: defineEvent(
    'ToolCallRewritten',
    object({ callId: string(), name: string(), from: record(unknown()), to: record(unknown()) }),
  ),
  ToolCalled: defineEvent('ToolCalled', object({ callId: string(), name: string(), owner: string(), args: record(unknown()) })),
  ToolCompleted: defineEvent('ToolCompleted', object({ callId: string(), name: string(), result: string(), error: optional(string()) })),
  OutputSent: defineEvent('OutputSent', object({ text: string() })),
  TurnCancelled: defineEvent('TurnCancelled', object({ during: string() })),
  TurnCompleted: defineEvent('TurnCompleted', object({ outcome: outcome(), rounds: integer() })),
} as const;

/** Recorded effect results and the request: inputs of a turn, not facts it decided. */
export const TURN_INPUT_TYPES: readonly TurnEvent['type'][] = [
  'TurnRequested',
  'LlmChunkRecorded',
  'LlmAnswerRecorded',
  'ToolResultRecorded',
  'HandlerResultRecorded',
];

export type TurnEvent = EventUnion<typeof turnEvents>;
