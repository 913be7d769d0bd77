/** Fills a scripted completion's defaults and splits its text and arguments into stream pieces; pure. */
import type { FinishReason, ScriptedCompletion } from './types.ts';

export type ResolvedToolCall = Readonly<{ id: string | undefined; name: string; arguments: Readonly<Record<string, unknown>> }>;

/** A completion with every default filled in, ready for a wire format. */
export type ResolvedReply = Readonly<{
  /** Sequence number of this answer on the server, for deterministic ids. */
  seq: number;
  model: string;
  text: string;
  /** The text as the stream sends it. */
  textPieces: readonly string[];
  toolCalls: readonly ResolvedToolCall[];
  finishReason: FinishReason;
  inputTokens: number;
  outputTokens: number;
  /** The request body, for protocol-specific options (OpenAI `stream_options.include_usage`). */
  requestBody: Readonly<Record<string, unknown>>;
}>;

const estimateTokens = (chars: number): number => Math.max(1, Math.ceil(chars / 4));

export const resolveReply = (reply: ScriptedCompletion, requestBody: unknown, rawBody: string, seq: number): ResolvedReply => {
  const body = (typeof requestBody === 'object' && requestBody !== null ? requestBody : {}) as Record<string, unknown>;
  const text = reply.text ?? '';
  if (reply.pieces && reply.pieces.join('') !== text)
    throw new Error(`scripted pieces ${JSON.stringify(reply.pieces)} do not join to the text`);
  const toolCalls = (reply.toolCalls ?? []).map((call) => ({ id: call.id, name: call.name, arguments: call.arguments }));
  const replyChars = text.length + toolCalls.reduce((sum, call) => sum + call.name.length + JSON.stringify(call.arguments).length, 0);
  return {
    seq,
    model: typeof body.model === 'string' ? body.model : 'test-model',
    text,
    textPieces: reply.pieces ?? splitWords(text),
    toolCalls,
    finishReason: reply.finishReason ?? (toolCalls.length > 0 ? 'tool_calls' : 'stop'),
    inputTokens: reply.usage?.inputTokens ?? estimateTokens(rawBody.length),
    outputTokens: reply.usage?.outputTokens ?? estimateTokens(replyChars),
    requestBody: body,
  };
};

/** Text as word-sized pieces (each word keeps its trailing whitespace); joins back to `text`. */
export const splitWords = (text: string): string[] => text.match(/\s*\S+\s*|\s+/g) ?? [];

/** A string cut into `parts` nearly equal pieces (fewer when it is shorter); joins back to `s`. */
export const splitPieces = (s: string, parts = 4): string[] => {
  if (s.length === 0) return [];
  const size = Math.ceil(s.length / parts);
  const out: string[] = [];
  for (let at = 0; at < s.length; at += size) out.push(s.slice(at, at + size));
  return out;
};

/** A fixed timestamp so answers are reproducible. */
export const CREATED_SECONDS = 1_700_000_000;
