/** Fixtures of the LLM adapter tests: a provider-neutral conversation (system, history, two tool calls, their results) and a helper for expected adapter errors. */
import { expect } from 'vitest';
import type { CompletionRequest, ToolDefinition } from '../../adapters/llm/llmTypes.ts';
import { LuaAdapterError } from '../../adapters/llm/luaAdapterError.ts';

export const weatherTool: ToolDefinition = {
  name: 'get_weather',
  description: 'Current weather for a city',
  parameters: {
    type: 'object',
    properties: { city: { type: 'string' }, units: { type: 'string', enum: ['c', 'f'] } },
    required: ['city'],
  },
};

/** Its schema has an empty `properties` object, which must stay `{}` on the wire, never `[]`. */
export const timeTool: ToolDefinition = {
  name: 'get_time',
  description: 'Current local time',
  parameters: { type: 'object', properties: {} },
};

export function conversationRequest(model: string, stream = false): CompletionRequest {
  return {
    model,
    stream,
    maxTokens: 256,
    temperature: 0.2,
    tools: [weatherTool, timeTool],
    messages: [
      { role: 'system', content: 'You are terse.' },
      { role: 'user', content: "What's the weather in Paris?" },
      {
        role: 'assistant',
        content: 'Let me check.',
        toolCalls: [
          { id: 'call_1', name: 'get_weather', arguments: { city: 'Paris', units: 'c' } },
          { id: 'call_2', name: 'get_time', arguments: {} },
        ],
      },
      { role: 'tool', toolCallId: 'call_1', content: '{"temp":18}' },
      { role: 'tool', toolCallId: 'call_2', content: '12:00' },
      { role: 'user', content: 'And in Fahrenheit?' },
    ],
  };
}

/** The LuaAdapterError a call throws; fails the test when it throws nothing or something else. */
export function caught(f: () => unknown): LuaAdapterError {
  try {
    f();
  } catch (e) {
    expect(e).toBeInstanceOf(LuaAdapterError);
    return e as LuaAdapterError;
  }
  throw new Error('expected a LuaAdapterError, nothing was thrown');
}
