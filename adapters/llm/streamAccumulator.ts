/**
 * Folds StreamDeltas into one CompletionResponse. Pure. Tool-call fragments are grouped by
 * `index` (a fragment without one starts a new call), their argument fragments concatenated in
 * arrival order and JSON-parsed once at the end.
 */
import { quotedPart } from './quotedPart.ts';
import { ARGUMENTS_DEPTH_AT_MOST, nestsDeeperThan } from './jsonDepth.ts';
import { HologramError } from '../../events/index.ts';
import type { CompletionResponse, FinishReason, StreamDelta, ToolCall } from './llmTypes.ts';

export class StreamAccumulationError extends HologramError {
  readonly code = 'STREAM_BAD_TOOL_ARGUMENTS';
  constructor(
    readonly toolCallIndex: number,
    readonly toolName: string,
    readonly argumentsText: string,
    reason: string,
  ) {
    super(
      `streamed tool call #${toolCallIndex} '${toolName}' has arguments that are not a JSON object (${reason}): ${quotedPart(argumentsText, 200)}`,
    );
  }
}

type PendingCall = { key: number; id?: string; name?: string; args: string };

export type StreamAccumulator = Readonly<{
  push(delta: StreamDelta): void;
  /** True once a delta said `done`. */
  readonly done: boolean;
  /** The provider-reported stream error, if any (finish() then says finishReason 'error'). */
  readonly error: string | undefined;
  /** The response so far; throws StreamAccumulationError when tool arguments are not JSON. */
  finish(): CompletionResponse;
}>;

export function createStreamAccumulator(): StreamAccumulator {
  let text = '';
  let finishReason: FinishReason | undefined;
  let error: string | undefined;
  let inputTokens: number | undefined;
  let outputTokens: number | undefined;
  let done = false;
  const calls: PendingCall[] = [];
  let unindexed = 0;

  function callFor(index: number | undefined): PendingCall {
    const key = index ?? -1 - unindexed++;
    let call = index === undefined ? undefined : calls.find((c) => c.key === key);
    if (!call) {
      call = { key, args: '' };
      calls.push(call);
    }
    return call;
  }

  return {
    push(delta) {
      if (delta.text !== undefined) text += delta.text;
      for (const d of delta.toolCalls ?? []) {
        const call = callFor(d.index);
        if (d.id !== undefined && d.id !== '') call.id = d.id;
        if (d.name !== undefined && d.name !== '') call.name = d.name;
        if (d.argumentsFragment !== undefined) call.args += d.argumentsFragment;
      }
      if (delta.finishReason !== undefined) finishReason = delta.finishReason;
      if (delta.error !== undefined) error = delta.error;
      if (delta.usage?.inputTokens !== undefined) inputTokens = delta.usage.inputTokens;
      if (delta.usage?.outputTokens !== undefined) outputTokens = delta.usage.outputTokens;
      if (delta.done) done = true;
    },
    get done() {
      return done;
    },
    get error() {
      return error;
    },
    finish() {
      const toolCalls = calls.map((c, i) => toToolCall(c, i));
      const reason: FinishReason = error !== undefined ? 'error' : (finishReason ?? (toolCalls.length > 0 ? 'tool_calls' : 'stop'));
      return {
        text,
        toolCalls,
        finishReason: reason,
        ...(inputTokens === undefined && outputTokens === undefined
          ? {}
          : { usage: { inputTokens: inputTokens ?? 0, outputTokens: outputTokens ?? 0 } }),
      };
    },
  };
}

function toToolCall(call: PendingCall, position: number): ToolCall {
  const name = call.name ?? '';
  const source = call.args.trim() === '' ? '{}' : call.args;
  let parsed: unknown;
  try {
    parsed = JSON.parse(source);
  } catch (e) {
    throw new StreamAccumulationError(position, name, call.args, (e as Error).message);
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    throw new StreamAccumulationError(position, name, call.args, 'not an object');
  }
  if (nestsDeeperThan(parsed, ARGUMENTS_DEPTH_AT_MOST)) {
    throw new StreamAccumulationError(position, name, quotedPart(call.args, 200), `nested deeper than ${ARGUMENTS_DEPTH_AT_MOST} levels`);
  }
  return { id: call.id ?? `call_${position}`, name, arguments: parsed as Record<string, unknown> };
}

/** Folds a whole list of deltas (convenience for tests and non-incremental callers). */
export function accumulateStream(deltas: Iterable<StreamDelta | null>): CompletionResponse {
  const acc = createStreamAccumulator();
  for (const d of deltas) if (d) acc.push(d);
  return acc.finish();
}
