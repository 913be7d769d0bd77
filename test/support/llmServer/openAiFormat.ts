/** OpenAI chat-completions: JSON answers, SSE `data:` chunks ending in `[DONE]`, `{ error: { message, type, code } }`. */
import { CREATED_SECONDS, splitPieces, type ResolvedReply } from './resolveReply.ts';
import { sse, type WireFormat } from './wireFormat.ts';

const toolCallId = (reply: ResolvedReply, i: number): string => reply.toolCalls[i]?.id ?? `call_test_${reply.seq}_${i}`;

const usage = (reply: ResolvedReply) => ({
  prompt_tokens: reply.inputTokens,
  completion_tokens: reply.outputTokens,
  total_tokens: reply.inputTokens + reply.outputTokens,
});

const errorTypes: Record<number, { type: string; code: string | null }> = {
  400: { type: 'invalid_request_error', code: null },
  401: { type: 'invalid_request_error', code: 'invalid_api_key' },
  403: { type: 'invalid_request_error', code: 'unsupported_country_region_territory' },
  404: { type: 'invalid_request_error', code: 'model_not_found' },
  429: { type: 'requests', code: 'rate_limit_exceeded' },
};

export const openAiFormat: WireFormat = {
  protocol: 'openai',
  streamContentType: 'text/event-stream',
  streamsByDefault: false,

  body: (reply) => ({
    id: `chatcmpl-test-${reply.seq}`,
    object: 'chat.completion',
    created: CREATED_SECONDS,
    model: reply.model,
    choices: [
      {
        index: 0,
        message: {
          role: 'assistant',
          content: reply.text.length > 0 || reply.toolCalls.length === 0 ? reply.text : null,
          ...(reply.toolCalls.length > 0
            ? {
                tool_calls: reply.toolCalls.map((call, i) => ({
                  id: toolCallId(reply, i),
                  type: 'function',
                  function: { name: call.name, arguments: JSON.stringify(call.arguments) },
                })),
              }
            : {}),
        },
        logprobs: null,
        finish_reason: reply.finishReason,
      },
    ],
    usage: usage(reply),
  }),

  frames: (reply) => {
    const chunk = (delta: unknown, finishReason: string | null = null) =>
      sse({
        id: `chatcmpl-test-${reply.seq}`,
        object: 'chat.completion.chunk',
        created: CREATED_SECONDS,
        model: reply.model,
        choices: [{ index: 0, delta, logprobs: null, finish_reason: finishReason }],
      });
    const frames = [chunk({ role: 'assistant', content: '' })];
    for (const piece of reply.textPieces) frames.push(chunk({ content: piece }));
    reply.toolCalls.forEach((call, index) => {
      frames.push(
        chunk({ tool_calls: [{ index, id: toolCallId(reply, index), type: 'function', function: { name: call.name, arguments: '' } }] }),
      );
      for (const piece of splitPieces(JSON.stringify(call.arguments))) {
        frames.push(chunk({ tool_calls: [{ index, function: { arguments: piece } }] }));
      }
    });
    frames.push(chunk({}, reply.finishReason));
    const options = reply.requestBody.stream_options as { include_usage?: unknown } | undefined;
    if (options?.include_usage === true) {
      frames.push(
        sse({
          id: `chatcmpl-test-${reply.seq}`,
          object: 'chat.completion.chunk',
          created: CREATED_SECONDS,
          model: reply.model,
          choices: [],
          usage: usage(reply),
        }),
      );
    }
    frames.push(sse('[DONE]'));
    return frames;
  },

  error: (status, message) => {
    const { type, code } = errorTypes[status] ?? { type: 'server_error', code: null };
    return { error: { message, type, param: null, code } };
  },
};
