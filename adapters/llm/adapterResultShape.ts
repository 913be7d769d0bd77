/**
 * Shape checks for what adapter scripts return. Pure: each function returns the typed value or
 * throws ADAPTER_BAD_RESULT naming the adapter, the Lua function and the offending field.
 */
import { quotedPart } from './quotedPart.ts';
import { ARGUMENTS_DEPTH_AT_MOST, nestsDeeperThan } from './jsonDepth.ts';
import { LuaAdapterError } from './luaAdapterError.ts';
import {
  FINISH_REASONS,
  type CompletionResponse,
  type FinishReason,
  type StreamDelta,
  type ToolCall,
  type ToolCallDelta,
  type Usage,
  type WireRequest,
} from './llmTypes.ts';

type Where = Readonly<{ adapter: string; fn: string }>;
type Obj = Record<string, unknown>;

function fail(where: Where, field: string, expected: string, got: unknown): never {
  const shown =
    got === undefined
      ? 'nothing (nil)'
      : `${Array.isArray(got) ? 'array' : got === null ? 'null' : typeof got} ${quotedPart(JSON.stringify(got) ?? '', 60)}`;
  throw new LuaAdapterError('ADAPTER_BAD_RESULT', where.adapter, where.fn, `field '${field}' must be ${expected}, got ${shown}`);
}

function isObj(v: unknown): v is Obj {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function obj(w: Where, field: string, v: unknown): Obj {
  return isObj(v) ? v : fail(w, field, 'a table (object)', v);
}

function str(w: Where, field: string, v: unknown): string {
  return typeof v === 'string' ? v : fail(w, field, 'a string', v);
}

function optStr(w: Where, field: string, v: unknown): string | undefined {
  return v === undefined ? undefined : str(w, field, v);
}

function num(w: Where, field: string, v: unknown): number {
  return typeof v === 'number' ? v : fail(w, field, 'a number', v);
}

/** Lua has no distinct empty array: an empty table arrives as `{}` and is accepted as `[]` here. */
function list(w: Where, field: string, v: unknown): unknown[] {
  if (Array.isArray(v)) return v;
  if (isObj(v) && Object.keys(v).length === 0) return [];
  return fail(w, field, 'an array', v);
}

function finish(w: Where, field: string, v: unknown): FinishReason {
  return FINISH_REASONS.includes(v as FinishReason) ? (v as FinishReason) : fail(w, field, `one of ${FINISH_REASONS.join('|')}`, v);
}

export function checkWireRequest(w: Where, v: unknown): WireRequest {
  const o = obj(w, '<result>', v);
  const path = str(w, 'path', o.path);
  if (!path.startsWith('/')) fail(w, 'path', "a path starting with '/'", path);
  if (o.body === undefined) fail(w, 'body', 'a JSON value', o.body);
  return { path, body: o.body };
}

export function checkHeaders(w: Where, v: unknown): Record<string, string> {
  const o = v === undefined ? {} : obj(w, '<result>', v);
  const out: Record<string, string> = {};
  for (const [k, value] of Object.entries(o)) out[k] = str(w, k, value);
  return out;
}

function checkToolCall(w: Where, field: string, v: unknown): ToolCall {
  const o = obj(w, field, v);
  const args = obj(w, `${field}.arguments`, o.arguments);
  if (nestsDeeperThan(args, ARGUMENTS_DEPTH_AT_MOST)) {
    fail(w, `${field}.arguments`, `an object nested at most ${ARGUMENTS_DEPTH_AT_MOST} levels`, 'one nested deeper');
  }
  return { id: str(w, `${field}.id`, o.id), name: str(w, `${field}.name`, o.name), arguments: args };
}

function checkUsage(w: Where, field: string, v: unknown): Usage {
  const o = obj(w, field, v);
  return { inputTokens: num(w, `${field}.inputTokens`, o.inputTokens), outputTokens: num(w, `${field}.outputTokens`, o.outputTokens) };
}

export function checkCompletionResponse(w: Where, v: unknown): CompletionResponse {
  const o = obj(w, '<result>', v);
  const toolCalls = list(w, 'toolCalls', o.toolCalls ?? []).map((c, i) => checkToolCall(w, `toolCalls[${i}]`, c));
  return {
    text: str(w, 'text', o.text),
    toolCalls,
    finishReason: finish(w, 'finishReason', o.finishReason),
    ...(o.usage === undefined ? {} : { usage: checkUsage(w, 'usage', o.usage) }),
  };
}

function checkToolCallDelta(w: Where, field: string, v: unknown): ToolCallDelta {
  const o = obj(w, field, v);
  const index = o.index === undefined ? undefined : num(w, `${field}.index`, o.index);
  const id = optStr(w, `${field}.id`, o.id);
  const name = optStr(w, `${field}.name`, o.name);
  const argumentsFragment = optStr(w, `${field}.argumentsFragment`, o.argumentsFragment);
  return {
    ...(index === undefined ? {} : { index }),
    ...(id === undefined ? {} : { id }),
    ...(name === undefined ? {} : { name }),
    ...(argumentsFragment === undefined ? {} : { argumentsFragment }),
  };
}

/** `undefined` (Lua nil) means the chunk carries nothing (keep-alive, ping, role-only delta). */
export function checkStreamDelta(w: Where, v: unknown): StreamDelta | null {
  if (v === undefined || v === null) return null;
  const o = obj(w, '<result>', v);
  const delta: {
    -readonly [K in keyof StreamDelta]: StreamDelta[K];
  } = {};
  if (o.text !== undefined) delta.text = str(w, 'text', o.text);
  if (o.toolCalls !== undefined)
    delta.toolCalls = list(w, 'toolCalls', o.toolCalls).map((c, i) => checkToolCallDelta(w, `toolCalls[${i}]`, c));
  if (o.finishReason !== undefined) delta.finishReason = finish(w, 'finishReason', o.finishReason);
  if (o.usage !== undefined) {
    const u = obj(w, 'usage', o.usage);
    delta.usage = {
      ...(u.inputTokens === undefined ? {} : { inputTokens: num(w, 'usage.inputTokens', u.inputTokens) }),
      ...(u.outputTokens === undefined ? {} : { outputTokens: num(w, 'usage.outputTokens', u.outputTokens) }),
    };
  }
  if (o.error !== undefined) delta.error = str(w, 'error', o.error);
  if (o.done !== undefined) {
    if (typeof o.done !== 'boolean') fail(w, 'done', 'a boolean', o.done);
    delta.done = o.done;
  }
  return delta;
}
