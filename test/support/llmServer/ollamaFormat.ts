/** Ollama native chat: streams NDJSON by default, tool arguments as objects, `{ error: string }`. */
import type { ResolvedReply } from './resolveReply.ts';
import type { WireFormat } from './wireFormat.ts';

const CREATED_AT = '2023-11-14T22:13:20.000Z';

const line = (value: unknown): string => `${JSON.stringify(value)}\n`;

const toolCalls = (reply: ResolvedReply) =>
  reply.toolCalls.map((call) => ({
    ...(call.id === undefined ? {} : { id: call.id }),
    function: { name: call.name, arguments: call.arguments },
  }));

const doneFields = (reply: ResolvedReply) => ({
  done: true,
  done_reason: reply.finishReason === 'length' ? 'length' : 'stop',
  total_duration: 1_000_000,
  load_duration: 100_000,
  prompt_eval_count: reply.inputTokens,
  prompt_eval_duration: 200_000,
  eval_count: reply.outputTokens,
  eval_duration: 700_000,
});

export const ollamaFormat: WireFormat = {
  protocol: 'ollama',
  streamContentType: 'application/x-ndjson',
  streamsByDefault: true,

  body: (reply) => ({
    model: reply.model,
    created_at: CREATED_AT,
    message: { role: 'assistant', content: reply.text, ...(reply.toolCalls.length > 0 ? { tool_calls: toolCalls(reply) } : {}) },
    ...doneFields(reply),
  }),

  frames: (reply) => {
    const chunk = (message: Record<string, unknown>) =>
      line({ model: reply.model, created_at: CREATED_AT, message: { role: 'assistant', ...message }, done: false });
    const frames = reply.textPieces.map((content) => chunk({ content }));
    if (reply.toolCalls.length > 0) frames.push(chunk({ content: '', tool_calls: toolCalls(reply) }));
    frames.push(line({ model: reply.model, created_at: CREATED_AT, message: { role: 'assistant', content: '' }, ...doneFields(reply) }));
    return frames;
  },

  error: (_status, message) => ({ error: message }),
};
