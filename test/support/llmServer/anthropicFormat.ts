/** Anthropic messages: content blocks, SSE `event:` + `data:` streams, `{ type: 'error', error: { type, message } }`. */
import { splitPieces, type ResolvedReply } from './resolveReply.ts';
import { sse, type WireFormat } from './wireFormat.ts';
import type { FinishReason } from './types.ts';

const stopReasons: Record<FinishReason, string> = { stop: 'end_turn', tool_calls: 'tool_use', length: 'max_tokens' };

const toolUseId = (reply: ResolvedReply, i: number): string => reply.toolCalls[i]?.id ?? `toolu_test_${reply.seq}_${i}`;

const errorTypes: Record<number, string> = {
  400: 'invalid_request_error',
  401: 'authentication_error',
  403: 'permission_error',
  404: 'not_found_error',
  429: 'rate_limit_error',
  529: 'overloaded_error',
};

const event = (type: string, data: Record<string, unknown>): string => sse({ type, ...data }, type);

export const anthropicFormat: WireFormat = {
  protocol: 'anthropic',
  streamContentType: 'text/event-stream',
  streamsByDefault: false,

  body: (reply) => ({
    id: `msg_test_${reply.seq}`,
    type: 'message',
    role: 'assistant',
    model: reply.model,
    content: [
      ...(reply.text.length > 0 ? [{ type: 'text', text: reply.text }] : []),
      ...reply.toolCalls.map((call, i) => ({ type: 'tool_use', id: toolUseId(reply, i), name: call.name, input: call.arguments })),
    ],
    stop_reason: stopReasons[reply.finishReason],
    stop_sequence: null,
    usage: { input_tokens: reply.inputTokens, output_tokens: reply.outputTokens },
  }),

  frames: (reply) => {
    const frames = [
      event('message_start', {
        message: {
          id: `msg_test_${reply.seq}`,
          type: 'message',
          role: 'assistant',
          model: reply.model,
          content: [],
          stop_reason: null,
          stop_sequence: null,
          usage: { input_tokens: reply.inputTokens, output_tokens: 1 },
        },
      }),
      event('ping', {}),
    ];
    let index = 0;
    if (reply.text.length > 0) {
      frames.push(event('content_block_start', { index, content_block: { type: 'text', text: '' } }));
      for (const text of reply.textPieces) frames.push(event('content_block_delta', { index, delta: { type: 'text_delta', text } }));
      frames.push(event('content_block_stop', { index }));
      index += 1;
    }
    reply.toolCalls.forEach((call, i) => {
      frames.push(
        event('content_block_start', { index, content_block: { type: 'tool_use', id: toolUseId(reply, i), name: call.name, input: {} } }),
      );
      for (const partial_json of ['', ...splitPieces(JSON.stringify(call.arguments))]) {
        frames.push(event('content_block_delta', { index, delta: { type: 'input_json_delta', partial_json } }));
      }
      frames.push(event('content_block_stop', { index }));
      index += 1;
    });
    frames.push(
      event('message_delta', {
        delta: { stop_reason: stopReasons[reply.finishReason], stop_sequence: null },
        usage: { output_tokens: reply.outputTokens },
      }),
      event('message_stop', {}),
    );
    return frames;
  },

  error: (status, message) => ({ type: 'error', error: { type: errorTypes[status] ?? 'api_error', message } }),
};
