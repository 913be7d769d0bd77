import { afterAll, describe, expect, it } from 'vitest';
import { LuaAdapter, loadAdapter } from '../../adapters/llm/luaAdapter.ts';
import { accumulateStream } from '../../adapters/llm/streamAccumulator.ts';
import { caught, conversationRequest, timeTool, weatherTool } from '../support/llmFixtures.ts';

const openai = loadAdapter('openai');
const anthropic = loadAdapter('anthropic');
const ollama = loadAdapter('ollama');
afterAll(() => {
  for (const a of [openai, anthropic, ollama]) a.close();
});

describe('openai', () => {
  it('given a conversation with system, history, tools and tool results, when transformed, then the exact chat-completions body', () => {
    const wire = openai.transformRequest(conversationRequest('gpt-4o-mini'), { baseUrl: 'http://127.0.0.1:8000/v1', model: 'gpt-4o-mini' });
    expect(wire.path).toBe('/chat/completions');
    expect(JSON.stringify(wire.body)).toBe(
      JSON.stringify({
        model: 'gpt-4o-mini',
        messages: [
          { role: 'system', content: 'You are terse.' },
          { role: 'user', content: "What's the weather in Paris?" },
          {
            role: 'assistant',
            content: 'Let me check.',
            tool_calls: [
              { id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris","units":"c"}' } },
              { id: 'call_2', type: 'function', function: { name: 'get_time', arguments: '{}' } },
            ],
          },
          { role: 'tool', tool_call_id: 'call_1', content: '{"temp":18}' },
          { role: 'tool', tool_call_id: 'call_2', content: '12:00' },
          { role: 'user', content: 'And in Fahrenheit?' },
        ],
        stream: false,
        tools: [
          { type: 'function', function: { name: 'get_weather', description: weatherTool.description, parameters: weatherTool.parameters } },
          {
            type: 'function',
            function: { name: 'get_time', description: timeTool.description, parameters: { type: 'object', properties: {} } },
          },
        ],
        max_tokens: 256,
        temperature: 0.2,
      }),
    );
  });

  it('given a streaming request, then stream and include_usage are set', () => {
    const { body } = openai.transformRequest(conversationRequest('m', true), { baseUrl: 'x', model: 'm' });
    expect(body).toMatchObject({ stream: true, stream_options: { include_usage: true } });
  });

  it('given an assistant message with only tool calls, then content is null on the wire', () => {
    const { body } = openai.transformRequest(
      { model: 'm', stream: false, messages: [{ role: 'assistant', content: '', toolCalls: [{ id: 'c', name: 'n', arguments: {} }] }] },
      { baseUrl: 'x', model: 'm' },
    );
    expect((body as { messages: unknown[] }).messages[0]).toStrictEqual({
      role: 'assistant',
      content: null,
      tool_calls: [{ id: 'c', type: 'function', function: { name: 'n', arguments: '{}' } }],
    });
  });

  it('given a text response, then text, stop and usage', () => {
    const res = openai.transformResponse({
      id: 'chatcmpl-1',
      object: 'chat.completion',
      model: 'gpt-4o-mini',
      choices: [{ index: 0, message: { role: 'assistant', content: 'It is 18°C.', refusal: null }, logprobs: null, finish_reason: 'stop' }],
      usage: { prompt_tokens: 50, completion_tokens: 7, total_tokens: 57 },
    });
    expect(res).toStrictEqual({ text: 'It is 18°C.', toolCalls: [], finishReason: 'stop', usage: { inputTokens: 50, outputTokens: 7 } });
  });

  it('given a tool-call response with JSON-string arguments, then parsed tool calls', () => {
    const res = openai.transformResponse({
      choices: [
        {
          index: 0,
          message: {
            role: 'assistant',
            content: null,
            tool_calls: [
              { id: 'call_a', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris","units":"c"}' } },
              { id: 'call_b', type: 'function', function: { name: 'get_time', arguments: '{}' } },
            ],
          },
          finish_reason: 'tool_calls',
        },
      ],
    });
    expect(res).toStrictEqual({
      text: '',
      toolCalls: [
        { id: 'call_a', name: 'get_weather', arguments: { city: 'Paris', units: 'c' } },
        { id: 'call_b', name: 'get_time', arguments: {} },
      ],
      finishReason: 'tool_calls',
    });
  });

  it('given a response whose tool arguments are not JSON, then a Lua error naming the tool', () => {
    const e = caught(() =>
      openai.transformResponse({
        choices: [
          {
            message: { content: null, tool_calls: [{ id: 'x', function: { name: 'get_weather', arguments: '{"city":' } }] },
            finish_reason: 'tool_calls',
          },
        ],
      }),
    );
    expect(e.detail).toContain("tool call 'get_weather' arguments are not a JSON object");
  });

  it('given a recorded-style SSE stream with text and two tool calls by index, then it accumulates', () => {
    const payloads = [
      '{"id":"c1","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":null}]}',
      '{"id":"c1","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":"Checking"},"finish_reason":null}]}',
      '{"id":"c1","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":" now."},"finish_reason":null}]}',
      '{"id":"c1","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_a","type":"function","function":{"name":"get_weather","arguments":""}}]},"finish_reason":null}]}',
      '{"id":"c1","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{\\"city\\":"}}]},"finish_reason":null}]}',
      '{"id":"c1","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"tool_calls":[{"index":1,"id":"call_b","type":"function","function":{"name":"get_time","arguments":""}}]},"finish_reason":null}]}',
      '{"id":"c1","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":" \\"Paris\\"}"}}]},"finish_reason":null}]}',
      '{"id":"c1","object":"chat.completion.chunk","choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}',
      '{"id":"c1","object":"chat.completion.chunk","choices":[],"usage":{"prompt_tokens":50,"completion_tokens":20,"total_tokens":70}}',
      '[DONE]',
    ];
    const deltas = payloads.map((p) => openai.transformStreamChunk(p));
    expect(deltas[0]).toBeNull();
    expect(deltas.at(-1)).toStrictEqual({ done: true });
    expect(accumulateStream(deltas)).toStrictEqual({
      text: 'Checking now.',
      toolCalls: [
        { id: 'call_a', name: 'get_weather', arguments: { city: 'Paris' } },
        { id: 'call_b', name: 'get_time', arguments: {} },
      ],
      finishReason: 'tool_calls',
      usage: { inputTokens: 50, outputTokens: 20 },
    });
  });

  it('given an API key, then a bearer header; without one, none', () => {
    expect(openai.headers({ apiKey: 'sk-test' })).toStrictEqual({ 'Content-Type': 'application/json', Authorization: 'Bearer sk-test' });
    expect(openai.headers({})).toStrictEqual({ 'Content-Type': 'application/json' });
    expect(openai.streamFraming).toBe('sse');
  });
});

describe('anthropic', () => {
  it('given the conversation, when transformed, then top-level system, content blocks and merged user turns', () => {
    const wire = anthropic.transformRequest(conversationRequest('claude-sonnet-4-5'), {
      baseUrl: 'https://api.anthropic.com',
      model: 'claude-sonnet-4-5',
    });
    expect(wire.path).toBe('/v1/messages');
    expect(wire.body).toStrictEqual({
      model: 'claude-sonnet-4-5',
      max_tokens: 256,
      temperature: 0.2,
      system: 'You are terse.',
      messages: [
        { role: 'user', content: "What's the weather in Paris?" },
        {
          role: 'assistant',
          content: [
            { type: 'text', text: 'Let me check.' },
            { type: 'tool_use', id: 'call_1', name: 'get_weather', input: { city: 'Paris', units: 'c' } },
            { type: 'tool_use', id: 'call_2', name: 'get_time', input: {} },
          ],
        },
        {
          role: 'user',
          content: [
            { type: 'tool_result', tool_use_id: 'call_1', content: '{"temp":18}' },
            { type: 'tool_result', tool_use_id: 'call_2', content: '12:00' },
            { type: 'text', text: 'And in Fahrenheit?' },
          ],
        },
      ],
      tools: [
        { name: 'get_weather', description: weatherTool.description, input_schema: weatherTool.parameters },
        { name: 'get_time', description: timeTool.description, input_schema: { type: 'object', properties: {} } },
      ],
    });
  });

  it('given no maxTokens, then max_tokens defaults to 4096 and stream is set when streaming', () => {
    const { body } = anthropic.transformRequest(
      { model: 'c', stream: true, messages: [{ role: 'user', content: 'hi' }] },
      { baseUrl: 'x', model: 'c' },
    );
    expect(body).toStrictEqual({ model: 'c', max_tokens: 4096, stream: true, messages: [{ role: 'user', content: 'hi' }] });
  });

  it('given text and tool_use responses, then unified responses with mapped stop reasons', () => {
    expect(
      anthropic.transformResponse({
        id: 'msg_1',
        type: 'message',
        role: 'assistant',
        model: 'c',
        content: [{ type: 'text', text: 'It is 18°C.' }],
        stop_reason: 'end_turn',
        stop_sequence: null,
        usage: { input_tokens: 30, output_tokens: 8 },
      }),
    ).toStrictEqual({ text: 'It is 18°C.', toolCalls: [], finishReason: 'stop', usage: { inputTokens: 30, outputTokens: 8 } });
    expect(
      anthropic.transformResponse({
        type: 'message',
        content: [
          { type: 'text', text: 'Checking.' },
          { type: 'tool_use', id: 'toolu_01', name: 'get_weather', input: { city: 'Paris' } },
          { type: 'tool_use', id: 'toolu_02', name: 'get_time', input: {} },
        ],
        stop_reason: 'tool_use',
        usage: { input_tokens: 30, output_tokens: 40 },
      }),
    ).toStrictEqual({
      text: 'Checking.',
      toolCalls: [
        { id: 'toolu_01', name: 'get_weather', arguments: { city: 'Paris' } },
        { id: 'toolu_02', name: 'get_time', arguments: {} },
      ],
      finishReason: 'tool_calls',
      usage: { inputTokens: 30, outputTokens: 40 },
    });
    expect(
      anthropic.transformResponse({ type: 'message', content: [{ type: 'text', text: 'cut' }], stop_reason: 'max_tokens' }).finishReason,
    ).toBe('length');
  });

  it('given a recorded-style event stream, then text, tool input fragments and split usage accumulate', () => {
    const events = [
      '{"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","content":[],"model":"c","stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":472,"output_tokens":2}}}',
      '{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}',
      '{"type":"ping"}',
      '{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Okay, let me check"}}',
      '{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":" the weather."}}',
      '{"type":"content_block_stop","index":0}',
      '{"type":"content_block_start","index":1,"content_block":{"type":"tool_use","id":"toolu_01","name":"get_weather","input":{}}}',
      '{"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":""}}',
      '{"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"{\\"city\\": \\"Par"}}',
      '{"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"is\\", \\"units\\": \\"c\\"}"}}',
      '{"type":"content_block_stop","index":1}',
      '{"type":"content_block_start","index":2,"content_block":{"type":"tool_use","id":"toolu_02","name":"get_time","input":{}}}',
      '{"type":"content_block_stop","index":2}',
      '{"type":"message_delta","delta":{"stop_reason":"tool_use","stop_sequence":null},"usage":{"output_tokens":89}}',
      '{"type":"message_stop"}',
    ];
    const deltas = events.map((e) => anthropic.transformStreamChunk(e));
    expect(deltas.at(-1)).toStrictEqual({ done: true });
    expect(accumulateStream(deltas)).toStrictEqual({
      text: 'Okay, let me check the weather.',
      toolCalls: [
        { id: 'toolu_01', name: 'get_weather', arguments: { city: 'Paris', units: 'c' } },
        { id: 'toolu_02', name: 'get_time', arguments: {} },
      ],
      finishReason: 'tool_calls',
      usage: { inputTokens: 472, outputTokens: 89 },
    });
  });

  it('given an error event mid-stream, then the delta reports it', () => {
    expect(anthropic.transformStreamChunk('{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}')).toStrictEqual({
      error: 'Overloaded',
      finishReason: 'error',
      done: true,
    });
  });

  it('given an API key, then x-api-key and anthropic-version', () => {
    expect(anthropic.headers({ apiKey: 'ak' })).toStrictEqual({
      'content-type': 'application/json',
      'anthropic-version': '2023-06-01',
      'x-api-key': 'ak',
    });
    expect(anthropic.streamFraming).toBe('sse');
  });
});

describe('ollama', () => {
  it('given the conversation, when transformed, then the native /api/chat body with object arguments and tool names', () => {
    const wire = ollama.transformRequest(conversationRequest('llama3.1'), { baseUrl: 'http://localhost:11434', model: 'llama3.1' });
    expect(wire.path).toBe('/api/chat');
    expect(wire.body).toStrictEqual({
      model: 'llama3.1',
      stream: false,
      options: { num_predict: 256, temperature: 0.2 },
      messages: [
        { role: 'system', content: 'You are terse.' },
        { role: 'user', content: "What's the weather in Paris?" },
        {
          role: 'assistant',
          content: 'Let me check.',
          tool_calls: [
            { function: { name: 'get_weather', arguments: { city: 'Paris', units: 'c' } } },
            { function: { name: 'get_time', arguments: {} } },
          ],
        },
        { role: 'tool', content: '{"temp":18}', tool_name: 'get_weather' },
        { role: 'tool', content: '12:00', tool_name: 'get_time' },
        { role: 'user', content: 'And in Fahrenheit?' },
      ],
      tools: [
        { type: 'function', function: { name: 'get_weather', description: weatherTool.description, parameters: weatherTool.parameters } },
        {
          type: 'function',
          function: { name: 'get_time', description: timeTool.description, parameters: { type: 'object', properties: {} } },
        },
      ],
    });
  });

  it('given text and tool-call responses, then unified responses', () => {
    expect(
      ollama.transformResponse({
        model: 'llama3.1',
        created_at: '2026-01-01T00:00:00Z',
        message: { role: 'assistant', content: 'It is 18°C.' },
        done: true,
        done_reason: 'stop',
        prompt_eval_count: 26,
        eval_count: 9,
      }),
    ).toStrictEqual({ text: 'It is 18°C.', toolCalls: [], finishReason: 'stop', usage: { inputTokens: 26, outputTokens: 9 } });
    expect(
      ollama.transformResponse({
        message: {
          role: 'assistant',
          content: '',
          tool_calls: [
            { function: { name: 'get_weather', arguments: { city: 'Paris' } } },
            { function: { name: 'get_time', arguments: {} } },
          ],
        },
        done: true,
        done_reason: 'stop',
      }),
    ).toStrictEqual({
      text: '',
      toolCalls: [
        { id: 'call_0', name: 'get_weather', arguments: { city: 'Paris' } },
        { id: 'call_1', name: 'get_time', arguments: {} },
      ],
      finishReason: 'tool_calls',
    });
  });

  it('given a recorded-style NDJSON stream, then text, whole tool calls and final counts accumulate', () => {
    const lines = [
      '{"model":"llama3.1","created_at":"2026-01-01T00:00:00.1Z","message":{"role":"assistant","content":"The"},"done":false}',
      '{"model":"llama3.1","created_at":"2026-01-01T00:00:00.2Z","message":{"role":"assistant","content":" weather:"},"done":false}',
      '{"model":"llama3.1","created_at":"2026-01-01T00:00:00.3Z","message":{"role":"assistant","content":"","tool_calls":[{"function":{"name":"get_weather","arguments":{"city":"Paris"}}}]},"done":false}',
      '{"model":"llama3.1","created_at":"2026-01-01T00:00:00.4Z","message":{"role":"assistant","content":"","tool_calls":[{"function":{"name":"get_time","arguments":{}}}]},"done":false}',
      '',
      '{"model":"llama3.1","created_at":"2026-01-01T00:00:00.5Z","message":{"role":"assistant","content":""},"done":true,"done_reason":"stop","total_duration":4883583458,"load_duration":1334875,"prompt_eval_count":26,"prompt_eval_duration":342546000,"eval_count":12,"eval_duration":4535599000}',
    ];
    const deltas = lines.map((l) => ollama.transformStreamChunk(l));
    expect(deltas[4]).toBeNull();
    expect(accumulateStream(deltas)).toStrictEqual({
      text: 'The weather:',
      toolCalls: [
        { id: 'call_0', name: 'get_weather', arguments: { city: 'Paris' } },
        { id: 'call_1', name: 'get_time', arguments: {} },
      ],
      finishReason: 'tool_calls',
      usage: { inputTokens: 26, outputTokens: 12 },
    });
  });

  it('given a length-limited final line, then finishReason length', () => {
    const deltas = [
      '{"message":{"role":"assistant","content":"abc"},"done":false}',
      '{"message":{"role":"assistant","content":""},"done":true,"done_reason":"length","prompt_eval_count":1,"eval_count":3}',
    ];
    expect(accumulateStream(deltas.map((l) => ollama.transformStreamChunk(l))).finishReason).toBe('length');
  });

  it('given headers, then content type and NDJSON framing', () => {
    expect(ollama.headers({})).toStrictEqual({ 'Content-Type': 'application/json' });
    expect(ollama.streamFraming).toBe('ndjson');
  });
});

describe('malformed adapters', () => {
  const base = `framing = "sse"
    function transform_request(req) return { path = "/x", body = {} } end
    function headers() return {} end
    function transform_stream_chunk() return nil end\n`;

  it('given a response missing finishReason, then ADAPTER_BAD_RESULT names adapter, function and field', () => {
    const bad = new LuaAdapter(
      'broken',
      `${base} function transform_response() return { text = "hi", toolCalls = {}, finishReason = "done" } end`,
    );
    const e = caught(() => bad.transformResponse({}));
    expect(e.code).toBe('ADAPTER_BAD_RESULT');
    expect(e.message).toContain("Lua adapter 'broken' transform_response");
    expect(e.detail).toContain("field 'finishReason' must be one of stop|tool_calls|length|error");
  });

  it('given a tool call with string arguments, then the error names toolCalls[0].arguments', () => {
    const bad = new LuaAdapter(
      'broken',
      `${base} function transform_response() return { text = "", finishReason = "tool_calls", toolCalls = { { id = "1", name = "n", arguments = "{}" } } } end`,
    );
    expect(caught(() => bad.transformResponse({})).detail).toContain("field 'toolCalls[0].arguments' must be a table (object), got string");
  });

  it('given a request path without a slash or a header that is not a string, then clear errors', () => {
    const bad = new LuaAdapter(
      'broken',
      `framing = "ndjson"
      function transform_request() return { path = "chat", body = {} } end
      function headers() return { ["X-N"] = 5 } end
      function transform_response() return {} end
      function transform_stream_chunk() return { text = 5 } end`,
    );
    expect(caught(() => bad.transformRequest({ model: 'm', stream: false, messages: [] }, { baseUrl: 'x', model: 'm' })).detail).toContain(
      "field 'path'",
    );
    expect(caught(() => bad.headers({})).detail).toContain("field 'X-N' must be a string, got number 5");
    expect(caught(() => bad.transformStreamChunk('x')).detail).toContain("field 'text' must be a string");
  });

  it('given a script without framing or a required function, then loading fails clearly', () => {
    expect(
      caught(() => new LuaAdapter('nofr', `${base.replace('framing = "sse"', '')}function transform_response() end`)).detail,
    ).toContain("global 'framing'");
    expect(caught(() => new LuaAdapter('nofn', base)).code).toBe('LUA_MISSING_FUNCTION');
  });

  it('given an unknown or path-like adapter name, then ADAPTER_NOT_FOUND', () => {
    expect(caught(() => loadAdapter('nope')).code).toBe('ADAPTER_NOT_FOUND');
    expect(caught(() => loadAdapter('../luaVm')).code).toBe('ADAPTER_NOT_FOUND');
  });
});
