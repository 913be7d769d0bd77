/**
 * An LLM source over HTTP: a Lua adapter shapes the request and reads the answer, fetch
 * carries it. A streamed answer is decoded frame by frame (SSE or NDJSON), each delta handed
 * on as it arrives; an abort signal cancels the HTTP request at once. The API key goes only
 * into the request headers, never into an error or a log line: every error text, the server's
 * included, is scrubbed of it.
 */
import { quotedPart } from './quotedPart.ts';
import { createHash } from 'node:crypto';
import type { CompletionRequest, CompletionResponse } from './llmTypes.ts';
import { loadAdapter, type LuaAdapter } from './luaAdapter.ts';
import { ProviderCallAborted, ProviderCallFailed, ProviderHttpError, type CallOptions, type Provider } from './provider.ts';
import { createStreamAccumulator } from './streamAccumulator.ts';
import { scrubSecret } from './scrubSecret.ts';
import { createFrameDecoder } from './streamFraming.ts';

export type HttpSourceConfig = Readonly<{
  name: string;
  /** A built-in adapter name ('openai', 'anthropic', 'ollama') or a loaded adapter. */
  adapter: string | LuaAdapter;
  /** e.g. http://127.0.0.1:8000/v1 for OpenAI-compatible servers, http://127.0.0.1:11434 for Ollama. */
  baseUrl: string;
  model: string;
  apiKey?: string;
  contextWindow?: number;
}>;

/**
 * The base URL requests go to. OpenAI-compatible servers serve under `/v1`; a URL with no path
 * at all (`http://127.0.0.1:8000`) means that, so the user need not know it.
 */
export const requestBaseUrl = (adapter: string | LuaAdapter, baseUrl: string): string => {
  const trimmed = baseUrl.replace(/\/+$/, '');
  if (adapter !== 'openai') return trimmed;
  const url = new URL(trimmed);
  return url.pathname === '/' || url.pathname === '' ? `${trimmed}/v1` : trimmed;
};

/** What an error body says, its key (when it quotes the one it was sent) taken out before a long body is cut. */
const errorDetail = (body: string, key: string | undefined): string => {
  try {
    const json = JSON.parse(body) as { error?: { message?: string } | string; message?: string };
    const message = typeof json.error === 'string' ? json.error : (json.error?.message ?? json.message);
    if (message) return message;
  } catch {
    // not JSON: fall through to the raw text
  }
  return quotedPart(scrubSecret(body, key), 300) || '(empty body)';
};

export class HttpProvider implements Provider {
  readonly name: string;
  readonly contextWindow: number | undefined;
  readonly credentialFingerprint: string;
  readonly model: string;
  private readonly adapter: LuaAdapter;
  private readonly baseUrl: string;

  constructor(private readonly config: HttpSourceConfig) {
    this.name = config.name;
    this.contextWindow = config.contextWindow;
    this.model = config.model;
    this.credentialFingerprint = createHash('sha256')
      .update(config.apiKey ?? '')
      .digest('hex')
      .slice(0, 16);
    this.adapter = typeof config.adapter === 'string' ? loadAdapter(config.adapter) : config.adapter;
    this.baseUrl = requestBaseUrl(config.adapter, config.baseUrl);
  }

  async complete(request: CompletionRequest, options: CallOptions = {}): Promise<CompletionResponse> {
    try {
      return await this.call(request, options);
    } catch (error) {
      throw this.scrubbed(error);
    }
  }

  /** The same error with the key taken out of its message (the cause is dropped: it may hold it too). */
  private scrubbed(error: unknown): unknown {
    const key = this.config.apiKey;
    if (!(error instanceof Error) || scrubSecret(error.message, key) === error.message) return error;
    if (error instanceof ProviderHttpError) return new ProviderHttpError(this.name, error.status, scrubSecret(error.detail, key));
    if (error instanceof ProviderCallFailed) return new ProviderCallFailed(this.name, scrubSecret(error.reason, key));
    return new ProviderCallFailed(this.name, scrubSecret(error.message, key));
  }

  private async call(request: CompletionRequest, options: CallOptions): Promise<CompletionResponse> {
    const { signal } = options;
    const wire = this.adapter.transformRequest(request, { baseUrl: this.config.baseUrl, model: this.config.model });
    const url = `${this.baseUrl}${wire.path}`;
    let response: Response;
    try {
      response = await fetch(url, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          ...this.adapter.headers({ ...(this.config.apiKey ? { apiKey: this.config.apiKey } : {}) }),
        },
        body: JSON.stringify(wire.body),
        ...(signal ? { signal } : {}),
      });
    } catch (error) {
      if (signal?.aborted) throw new ProviderCallAborted(this.name);
      const cause = (error as { cause?: { code?: string } }).cause?.code ?? (error as Error).message;
      throw new ProviderCallFailed(this.name, `cannot reach ${url} (${cause})`, { cause: error });
    }
    if (!response.ok) {
      const body = await response.text().catch(() => '');
      const hint = response.status === 404 ? ` (POST ${url} was not found: check the source's baseUrl and model)` : '';
      throw new ProviderHttpError(this.name, response.status, `${errorDetail(body, this.config.apiKey)}${hint}`);
    }
    try {
      return request.stream ? await this.readStream(response, options) : this.adapter.transformResponse(await response.json());
    } catch (error) {
      if (signal?.aborted) throw new ProviderCallAborted(this.name);
      if (error instanceof ProviderCallFailed) throw error;
      throw new ProviderCallFailed(this.name, (error as Error).message, { cause: error });
    }
  }

  private async readStream(response: Response, options: CallOptions): Promise<CompletionResponse> {
    if (!response.body) throw new ProviderCallFailed(this.name, 'a streamed answer came with no body');
    const frames = createFrameDecoder(this.adapter.streamFraming);
    const accumulator = createStreamAccumulator();
    const text = new TextDecoder();
    const take = (payloads: readonly string[]): boolean => {
      for (const payload of payloads) {
        const delta = this.adapter.transformStreamChunk(payload);
        if (!delta) continue;
        accumulator.push(delta);
        options.onDelta?.(delta);
        if (accumulator.done) return true;
      }
      return false;
    };
    let finished = false;
    for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) {
      if (take(frames.push(text.decode(chunk, { stream: true })))) {
        finished = true;
        break;
      }
    }
    if (!finished) finished = take(frames.end());
    if (!finished) throw new ProviderCallFailed(this.name, 'the stream ended before the model finished its answer');
    return accumulator.finish();
  }
}
