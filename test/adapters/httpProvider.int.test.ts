/** The HTTP provider and the provider chain against the local test LLM server (real HTTP). */
import { afterEach, describe, expect, it } from 'vitest';
import { ProviderChain } from '../../actors/llm/providerChain.ts';
import { HttpProvider } from '../../adapters/llm/httpProvider.ts';
import type { CompletionRequest, StreamDelta } from '../../adapters/llm/llmTypes.ts';
import { ProviderCallAborted, ProviderCallFailed, ProviderHttpError } from '../../adapters/llm/provider.ts';
import { startLlmServer, type LlmServer, type Protocol, type Script } from '../support/llmServer/index.ts';

/** The slow stream's pieces come this far apart (ms): a stop must cut the connection before the next. */
const PIECE_MS = 400;
const servers: LlmServer[] = [];
afterEach(async () => {
  for (const server of servers.splice(0)) await server.close();
});
const serve = async (script: Script) => {
  const server = await startLlmServer(script);
  servers.push(server);
  return server;
};

const provider = (server: LlmServer, protocol: Protocol, name: string = protocol, apiKey = 'sk-test-secret') =>
  new HttpProvider({ name, adapter: protocol, baseUrl: server.baseUrl(protocol), model: 'test-model', apiKey });

const ask = (stream: boolean): CompletionRequest => ({
  model: 'test-model',
  stream,
  messages: [
    { role: 'system', content: 'You are terse.' },
    { role: 'user', content: 'What is the weather in Paris?' },
  ],
  tools: [
    {
      name: 'weather_get',
      description: 'Current weather of a city',
      parameters: { type: 'object', properties: { city: { type: 'string' } } },
    },
  ],
});

describe.each(['openai', 'anthropic', 'ollama'] as const)('HttpProvider over %s', (protocol) => {
  it('answers a non-streamed request with text', async () => {
    const server = await serve([{ text: 'Sunny, 21 °C.' }]);
    const answer = await provider(server, protocol).complete(ask(false));
    expect(answer).toMatchObject({ text: 'Sunny, 21 °C.', toolCalls: [], finishReason: 'stop' });
    expect(server.requests[0]!.protocol).toBe(protocol);
  });

  it('streams a tool call, handing on each delta, and joins the argument fragments', async () => {
    const server = await serve([{ toolCalls: [{ name: 'weather_get', arguments: { city: 'Paris', unit: 'celsius' } }] }]);
    const deltas: StreamDelta[] = [];
    const answer = await provider(server, protocol).complete(ask(true), { onDelta: (d) => deltas.push(d) });
    expect(answer.finishReason).toBe('tool_calls');
    expect(answer.toolCalls).toEqual([expect.objectContaining({ name: 'weather_get', arguments: { city: 'Paris', unit: 'celsius' } })]);
    expect(deltas.length).toBeGreaterThan(1);
  });

  it('streams text in several deltas', async () => {
    const server = await serve([{ text: 'It is sunny and warm in Paris today.' }]);
    const deltas: StreamDelta[] = [];
    const answer = await provider(server, protocol).complete(ask(true), { onDelta: (d) => deltas.push(d) });
    expect(answer.text).toBe('It is sunny and warm in Paris today.');
    expect(deltas.filter((d) => d.text).length).toBeGreaterThan(1);
  });

  it('turns a 401 into an auth failure without the key in the message', async () => {
    const server = await serve([{ status: 401 }]);
    const error = await provider(server, protocol)
      .complete(ask(false))
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ProviderHttpError);
    expect((error as ProviderHttpError).isAuthFailure).toBe(true);
    expect((error as Error).message).not.toContain('sk-test-secret');
  });

  it('scrubs the key from an error body that echoes it, as written and URL-encoded', async () => {
    const key = 'sk-test/secret+9';
    const server = await serve([{ status: 400, message: `bad request for key ${key} (${encodeURIComponent(key)})` }]);
    const error = await provider(server, protocol, protocol, key)
      .complete(ask(false))
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ProviderHttpError);
    expect((error as ProviderHttpError).status).toBe(400);
    expect((error as Error).message).toContain('bad request for key [redacted] ([redacted])');
  });

  it('reports a stream cut mid-way as a failed call, not an answer', async () => {
    const server = await serve([{ text: 'a long answer that will not arrive whole', disconnectAfterChunks: 2 }]);
    await expect(provider(server, protocol).complete(ask(true))).rejects.toThrow(ProviderCallFailed);
  });

  it("aborts the HTTP request on a stop during streaming, before the server's next piece", async () => {
    const server = await serve([{ text: 'one two three four five six seven eight nine ten', slow: { chunkDelayMs: PIECE_MS } }]);
    const controller = new AbortController();
    let stoppedAt = 0;
    const call = provider(server, protocol).complete(ask(true), {
      signal: controller.signal,
      onDelta: () => {
        if (stoppedAt === 0) {
          stoppedAt = performance.now();
          controller.abort();
        }
      },
    });
    await expect(call).rejects.toThrow(ProviderCallAborted);
    const record = await server.settled(0);
    expect(record.outcome).toBe('aborted');
    // Not at the stream's end (seconds away): the connection is cut before the next piece was due.
    expect(record.abortedAt! - stoppedAt).toBeLessThan(PIECE_MS);
  });
});

describe('ProviderChain over HTTP', () => {
  it('falls through a source refusing its key to the next one, and remembers the refusal', async () => {
    const first = await serve([{ status: 401 }]);
    const second = await serve([{ text: 'from the second source' }, { text: 'again' }]);
    const chain = new ProviderChain([provider(first, 'openai', 'primary'), provider(second, 'anthropic', 'backup')]);
    expect(await chain.complete(ask(false))).toMatchObject({ text: 'from the second source', source: 'backup' });
    expect(await chain.complete(ask(false))).toMatchObject({ source: 'backup' });
    expect(first.requests).toHaveLength(1);
  });

  it('fails over when a source is unreachable', async () => {
    const dead = await serve([]);
    const url = dead.baseUrl('openai');
    await dead.close();
    servers.splice(servers.indexOf(dead), 1);
    const live = await serve([{ text: 'alive' }]);
    const unreachable = new HttpProvider({ name: 'dead', adapter: 'openai', baseUrl: url, model: 'm' });
    const answer = await new ProviderChain([unreachable, provider(live, 'ollama', 'live')]).complete(ask(false));
    expect(answer.source).toBe('live');
  });
});

describe('HttpProvider on a stream that ends cleanly but early', () => {
  it('refuses the partial answer instead of returning it as complete', async () => {
    const { createServer } = await import('node:http');
    const early = createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write('data: {"choices":[{"index":0,"delta":{"role":"assistant","content":"Half an"},"finish_reason":null}]}\n\n');
      res.end(); // no finish_reason, no [DONE]
    });
    await new Promise<void>((resolve) => early.listen(0, '127.0.0.1', resolve));
    const { port } = early.address() as { port: number };
    try {
      const source = new HttpProvider({ name: 'early', adapter: 'openai', baseUrl: `http://127.0.0.1:${port}/v1`, model: 'm' });
      await expect(source.complete(ask(true))).rejects.toThrow('the stream ended before the model finished its answer');
    } finally {
      early.close();
    }
  });
});

describe('HttpProvider over openai: the base URL', () => {
  it('works with or without /v1 when the URL has no path of its own', async () => {
    const server = await serve([{ text: 'with' }, { text: 'without' }]);
    const at = (baseUrl: string) => new HttpProvider({ name: 'local', adapter: 'openai', baseUrl, model: 'm' });
    expect((await at(`${server.url}/v1`).complete(ask(false))).text).toBe('with');
    expect((await at(`${server.url}/`).complete(ask(false))).text).toBe('without');
    expect(server.requests.map((r) => r.path)).toEqual(['/v1/chat/completions', '/v1/chat/completions']);
  });

  it('says which URL was not found, so a wrong baseUrl can be fixed', async () => {
    const server = await serve([{ text: 'never' }]);
    const error = await new HttpProvider({ name: 'local', adapter: 'openai', baseUrl: `${server.url}/api`, model: 'm' })
      .complete(ask(false))
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ProviderHttpError);
    expect((error as Error).message).toContain(`HTTP 404`);
    expect((error as Error).message).toContain(`POST ${server.url}/api/chat/completions was not found: check the source's baseUrl`);
  });
});
