import { performance } from 'node:perf_hooks';
import { afterEach, describe, expect, it } from 'vitest';
import { startLlmServer, type LlmServer, type Protocol, type Script } from '../support/llmServer/index.ts';

const paths: Record<Protocol, string> = { openai: '/chat/completions', anthropic: '/v1/messages', ollama: '/api/chat' };
const protocols: Protocol[] = ['openai', 'anthropic', 'ollama'];

let server: LlmServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

const start = async (script?: Script, options?: { openAiPrefix?: string }) => {
  server = await startLlmServer(script, options);
  return server;
};

const post = (llm: LlmServer, protocol: Protocol, body: unknown, init: RequestInit = {}) =>
  fetch(`${llm.baseUrl(protocol)}${paths[protocol]}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: typeof body === 'string' ? body : JSON.stringify(body),
    ...init,
  });

const chat = { model: 'test-model', messages: [{ role: 'user', content: 'hi' }] };
const weather = { name: 'get_weather', arguments: { city: 'Paris', units: 'metric', days: [1, 2, 3] } };

/** SSE events as `{ event, data }`; asserts every event is well framed. */
const parseSse = (text: string) => {
  expect(text.endsWith('\n\n')).toBe(true);
  return text
    .slice(0, -2)
    .split('\n\n')
    .map((block) => {
      const lines = block.split('\n');
      const event = lines.find((l) => l.startsWith('event: '))?.slice(7);
      const data = lines.find((l) => l.startsWith('data: '))?.slice(6);
      expect(lines.every((l) => l.startsWith('event: ') || l.startsWith('data: '))).toBe(true);
      return { event, data: data ?? '' };
    });
};

describe('llmServer: OpenAI chat completions', () => {
  it('answers a non-streamed text completion', async () => {
    const llm = await start([{ text: 'Hello there', usage: { inputTokens: 7, outputTokens: 3 } }]);
    const res = await post(llm, 'openai', chat);
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({
      object: 'chat.completion',
      model: 'test-model',
      choices: [{ index: 0, message: { role: 'assistant', content: 'Hello there' }, finish_reason: 'stop' }],
      usage: { prompt_tokens: 7, completion_tokens: 3, total_tokens: 10 },
    });
    expect(llm.requests[0]).toMatchObject({ method: 'POST', path: '/v1/chat/completions', protocol: 'openai', body: chat, stream: false });
  });

  it('answers a non-streamed tool call with JSON-string arguments', async () => {
    const llm = await start([{ toolCalls: [{ id: 'call_1', ...weather }] }]);
    const json = (await (await post(llm, 'openai', chat)).json()) as any;
    expect(json.choices[0].finish_reason).toBe('tool_calls');
    expect(json.choices[0].message.tool_calls).toEqual([
      { id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: JSON.stringify(weather.arguments) } },
    ]);
  });

  it('streams text as SSE data lines ending in [DONE]', async () => {
    const llm = await start([{ text: 'one two three four' }]);
    const res = await post(llm, 'openai', { ...chat, stream: true, stream_options: { include_usage: true } });
    expect(res.headers.get('content-type')).toBe('text/event-stream');
    const events = parseSse(await res.text());
    expect(events.every((e) => e.event === undefined)).toBe(true);
    expect(events.at(-1)?.data).toBe('[DONE]');
    const chunks = events.slice(0, -1).map((e) => JSON.parse(e.data));
    const deltas = chunks.flatMap((c) => c.choices.map((choice: any) => choice.delta.content ?? '')).filter((s: string) => s !== '');
    expect(deltas.length).toBeGreaterThan(1);
    expect(deltas.join('')).toBe('one two three four');
    const finals = chunks.filter((c) => c.choices[0]?.finish_reason != null);
    expect(finals.map((c) => c.choices[0].finish_reason)).toEqual(['stop']);
    expect(chunks.at(-1)).toMatchObject({ choices: [], usage: { total_tokens: expect.any(Number) } });
  });

  it('streams a tool call with arguments split across chunks', async () => {
    const llm = await start([{ toolCalls: [weather] }]);
    const events = parseSse(await (await post(llm, 'openai', { ...chat, stream: true })).text());
    const calls = events.slice(0, -1).flatMap((e) => JSON.parse(e.data).choices[0].delta.tool_calls ?? []);
    expect(calls[0]).toMatchObject({ index: 0, id: 'call_test_1_0', type: 'function', function: { name: 'get_weather' } });
    const pieces = calls.map((c: any) => c.function.arguments).filter((s: string) => s !== '');
    expect(pieces.length).toBeGreaterThan(2);
    expect(JSON.parse(pieces.join(''))).toEqual(weather.arguments);
    expect(JSON.parse(events.at(-2)!.data).choices[0].finish_reason).toBe('tool_calls');
  });

  it('serves the OpenAI routes under a configured prefix', async () => {
    const llm = await start([{ text: 'ok' }], { openAiPrefix: '/openai/v1/' });
    expect(llm.baseUrl('openai')).toBe(`${llm.url}/openai/v1`);
    expect((await post(llm, 'openai', chat)).status).toBe(200);
  });
});

describe('llmServer: Anthropic messages', () => {
  it('answers a non-streamed text message', async () => {
    const llm = await start([{ text: 'Hello there', usage: { inputTokens: 5, outputTokens: 2 } }]);
    expect(await (await post(llm, 'anthropic', chat)).json()).toMatchObject({
      type: 'message',
      role: 'assistant',
      model: 'test-model',
      content: [{ type: 'text', text: 'Hello there' }],
      stop_reason: 'end_turn',
      usage: { input_tokens: 5, output_tokens: 2 },
    });
  });

  it('answers a non-streamed tool_use block with an input object', async () => {
    const llm = await start([{ text: 'Let me check.', toolCalls: [weather] }]);
    expect(await (await post(llm, 'anthropic', chat)).json()).toMatchObject({
      content: [
        { type: 'text', text: 'Let me check.' },
        { type: 'tool_use', id: 'toolu_test_1_0', name: 'get_weather', input: weather.arguments },
      ],
      stop_reason: 'tool_use',
    });
  });

  it('streams text as event: + data: pairs in the documented order', async () => {
    const llm = await start([{ text: 'one two three', finishReason: 'length' }]);
    const res = await post(llm, 'anthropic', { ...chat, stream: true });
    expect(res.headers.get('content-type')).toBe('text/event-stream');
    const events = parseSse(await res.text());
    for (const e of events) expect(JSON.parse(e.data).type).toBe(e.event);
    expect(events.map((e) => e.event)).toEqual([
      'message_start',
      'ping',
      'content_block_start',
      'content_block_delta',
      'content_block_delta',
      'content_block_delta',
      'content_block_stop',
      'message_delta',
      'message_stop',
    ]);
    const data = events.map((e) => JSON.parse(e.data));
    expect(
      data
        .filter((d) => d.type === 'content_block_delta')
        .map((d) => d.delta.text)
        .join(''),
    ).toBe('one two three');
    expect(data[7]).toMatchObject({ delta: { stop_reason: 'max_tokens' }, usage: { output_tokens: expect.any(Number) } });
  });

  it('streams a tool_use block with input_json_delta pieces', async () => {
    const llm = await start([{ toolCalls: [weather] }]);
    const data = parseSse(await (await post(llm, 'anthropic', { ...chat, stream: true })).text()).map((e) => JSON.parse(e.data));
    expect(data.find((d) => d.type === 'content_block_start')).toEqual({
      type: 'content_block_start',
      index: 0,
      content_block: { type: 'tool_use', id: 'toolu_test_1_0', name: 'get_weather', input: {} },
    });
    const pieces = data.filter((d) => d.delta?.type === 'input_json_delta').map((d) => d.delta.partial_json as string);
    expect(pieces.filter((p) => p !== '').length).toBeGreaterThan(2);
    expect(JSON.parse(pieces.join(''))).toEqual(weather.arguments);
    expect(data.find((d) => d.type === 'message_delta').delta.stop_reason).toBe('tool_use');
  });
});

describe('llmServer: Ollama chat', () => {
  it('answers a non-streamed chat when stream is false', async () => {
    const llm = await start([{ text: 'Hello there', usage: { inputTokens: 4, outputTokens: 2 } }]);
    expect(await (await post(llm, 'ollama', { ...chat, stream: false })).json()).toMatchObject({
      model: 'test-model',
      created_at: expect.any(String),
      message: { role: 'assistant', content: 'Hello there' },
      done: true,
      done_reason: 'stop',
      prompt_eval_count: 4,
      eval_count: 2,
    });
  });

  it('answers a non-streamed tool call with object arguments', async () => {
    const llm = await start([{ toolCalls: [weather] }]);
    const json = (await (await post(llm, 'ollama', { ...chat, stream: false })).json()) as any;
    expect(json.message.tool_calls).toEqual([{ function: weather }]);
  });

  it('streams NDJSON by default, one object a line, the last done', async () => {
    const llm = await start([{ text: 'one two three' }]);
    const res = await post(llm, 'ollama', chat);
    expect(res.headers.get('content-type')).toBe('application/x-ndjson');
    const text = await res.text();
    expect(text.endsWith('\n')).toBe(true);
    const lines = text
      .slice(0, -1)
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(lines.length).toBe(4);
    expect(lines.slice(0, -1).every((l) => l.done === false)).toBe(true);
    expect(lines.map((l) => l.message.content).join('')).toBe('one two three');
    expect(lines.at(-1)).toMatchObject({
      done: true,
      done_reason: 'stop',
      prompt_eval_count: expect.any(Number),
      eval_count: expect.any(Number),
    });
    expect(llm.requests[0]?.stream).toBe(true);
  });

  it('streams tool calls in a chunk of their own', async () => {
    const llm = await start([{ text: 'Checking.', toolCalls: [weather] }]);
    const lines = (await (await post(llm, 'ollama', chat)).text())
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(lines.flatMap((l) => l.message.tool_calls ?? [])).toEqual([{ function: weather }]);
    expect(lines.at(-1).done).toBe(true);
  });
});

describe('llmServer: errors and behaviours', () => {
  const errorShapes: Record<Protocol, (status: number) => unknown> = {
    openai: (status) => ({
      error: {
        message: expect.any(String),
        type: status === 401 ? 'invalid_request_error' : 'server_error',
        code: status === 401 ? 'invalid_api_key' : null,
      },
    }),
    anthropic: (status) => ({
      type: 'error',
      error: { type: status === 401 ? 'authentication_error' : 'api_error', message: expect.any(String) },
    }),
    ollama: () => ({ error: expect.any(String) }),
  };

  it.each(protocols)('%s: 401 and 500 come back in the protocol error shape', async (protocol) => {
    const llm = await start([{ status: 401 }, { status: 500, message: 'boom' }]);
    const unauthorized = await post(llm, protocol, chat);
    expect(unauthorized.status).toBe(401);
    expect(await unauthorized.json()).toMatchObject(errorShapes[protocol](401) as object);
    const failed = await post(llm, protocol, chat);
    expect(failed.status).toBe(500);
    const body = await failed.json();
    expect(body).toMatchObject(errorShapes[protocol](500) as object);
    expect(JSON.stringify(body)).toContain('boom');
    expect(llm.requests.map((r) => [r.status, r.outcome])).toEqual([
      [401, 'error'],
      [500, 'error'],
    ]);
  });

  it('sends a scripted error body and headers verbatim', async () => {
    const llm = await start([{ status: 429, body: { custom: true }, headers: { 'retry-after': '2' } }]);
    const res = await post(llm, 'openai', chat);
    expect([res.status, res.headers.get('retry-after'), await res.json()]).toEqual([429, '2', { custom: true }]);
  });

  it.each(protocols)('%s: a body that is not JSON gets 400 without using the script', async (protocol) => {
    const llm = await start([{ text: 'kept' }]);
    const res = await post(llm, protocol, '{not json');
    expect(res.status).toBe(400);
    expect(JSON.stringify(await res.json())).toContain('not valid JSON');
    expect(llm.requests[0]?.outcome).toBe('badRequest');
    expect(await (await post(llm, protocol, { ...chat, stream: false })).text()).toContain('kept');
  });

  it.each(protocols)('%s: a disconnect mid-stream truncates the stream with an error', async (protocol) => {
    const llm = await start([{ text: 'one two three four five', disconnectAfterChunks: 2 }]);
    const res = await post(llm, protocol, { ...chat, stream: true });
    expect(res.status).toBe(200);
    const reader = res.body!.getReader();
    const seen: string[] = [];
    const decoder = new TextDecoder();
    await expect(
      (async () => {
        for (;;) {
          const { done, value } = await reader.read();
          if (done) return;
          seen.push(decoder.decode(value));
        }
      })(),
    ).rejects.toThrow();
    expect(seen.join('')).not.toContain('five');
    expect(await llm.settled(0)).toMatchObject({ outcome: 'disconnected', chunksWritten: 2 });
  });

  it('records a client abort of a hanging request with its time', async () => {
    const llm = await start([{ hang: true }]);
    const controller = new AbortController();
    const pending = post(llm, 'anthropic', chat, { signal: controller.signal });
    await llm.received(1);
    const abortedByClient = performance.now();
    controller.abort();
    await expect(pending).rejects.toThrow(/abort/i);
    const record = await llm.settled(0);
    expect(record.outcome).toBe('aborted');
    expect(record.abortedAt! - abortedByClient).toBeGreaterThanOrEqual(0);
    expect(record.abortedAt! - abortedByClient).toBeLessThan(1_000);
  });

  it('stops writing a slow stream when the client aborts mid-stream', async () => {
    const llm = await start([{ text: 'a b c d e f g h i j', slow: { chunkDelayMs: 20 } }]);
    const controller = new AbortController();
    const res = await post(llm, 'openai', { ...chat, stream: true }, { signal: controller.signal });
    const reader = res.body!.getReader();
    await reader.read();
    const abortedByClient = performance.now();
    controller.abort();
    const record = await llm.settled(0);
    expect(record.outcome).toBe('aborted');
    expect(record.abortedAt! - abortedByClient).toBeLessThan(1_000);
    expect(record.chunksWritten).toBeLessThan(13); // 1 role + 10 words + finish + [DONE]
    expect(record.finishedAt).toBeUndefined();
  });

  it('spaces slow stream chunks by the scripted delay, in order', async () => {
    const llm = await start([{ text: 'one two three', slow: { chunkDelayMs: 25 } }]);
    const sentAt = performance.now();
    const res = await post(llm, 'ollama', chat);
    const reader = res.body!.getReader();
    const decoder = new TextDecoder();
    const arrivals: { at: number; text: string }[] = [];
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      arrivals.push({ at: performance.now(), text: decoder.decode(value) });
    }
    const content = arrivals.flatMap((a) => a.text.trim().split('\n')).map((l) => JSON.parse(l).message.content);
    expect(content).toEqual(['one ', 'two ', 'three', '']);
    expect(arrivals.length).toBeGreaterThan(1); // delivered in pieces, not in one write
    const spread = arrivals.at(-1)!.at - sentAt; // three 25 ms gaps; timers never fire (much) early
    expect(spread).toBeGreaterThan(60);
    expect(spread).toBeLessThan(2_000);
  });

  it('answers 500 with a clear message once the script is exhausted, and records it', async () => {
    const llm = await start([{ text: 'only one' }]);
    expect((await post(llm, 'openai', chat)).status).toBe(200);
    const res = await post(llm, 'openai', chat);
    expect(res.status).toBe(500);
    expect(((await res.json()) as any).error.message).toMatch(/script exhausted: request #1 \(POST \/v1\/chat\/completions\)/);
    expect(llm.requests[1]).toMatchObject({ outcome: 'exhausted', status: 500 });
    llm.setScript([{ text: 'refilled' }]);
    expect(await (await post(llm, 'openai', chat)).text()).toContain('refilled');
  });

  it('matches replies by predicate, and repeats those marked repeat', async () => {
    const llm = await start([{ when: (r) => r.protocol === 'ollama', reply: { text: 'from ollama' }, repeat: true }, { text: 'in order' }]);
    const text = async (protocol: Protocol) => JSON.stringify(await (await post(llm, protocol, { ...chat, stream: false })).json());
    expect(await text('openai')).toContain('in order');
    expect(await text('ollama')).toContain('from ollama');
    expect(await text('ollama')).toContain('from ollama');
    const res = await post(llm, 'anthropic', chat);
    expect(res.status).toBe(500);
    expect(JSON.stringify(await res.json())).toContain('none of the 1 remaining replies matched');
  });

  it('answers 404 at a path no protocol serves', async () => {
    const llm = await start([{ text: 'unused' }]);
    const res = await fetch(`${llm.url}/v1/completions`, { method: 'POST', body: '{}' });
    expect(res.status).toBe(404);
    expect(llm.requests[0]).toMatchObject({ outcome: 'notFound', protocol: undefined });
  });
});
