/**
 * A provider wire format as a Lua script. Invariant: everything crossing in or out is checked,
 * so callers see only well-formed unified types or a LuaAdapterError naming adapter, function, field.
 *
 * Script contract (globals):
 *   framing = "sse" | "ndjson"
 *   function transform_request(req, source) -> { path = "/...", body = <json> }
 *   function headers(config)                 -> { ["Header-Name"] = "value", ... }
 *   function transform_response(json)        -> { text, toolCalls, finishReason, usage? }
 *   function transform_stream_chunk(chunk)   -> StreamDelta table, or nil to skip the chunk
 * Tables use the unified camelCase field names of llmTypes.ts in both directions.
 */
import { readFileSync } from 'node:fs';
import { checkCompletionResponse, checkHeaders, checkStreamDelta, checkWireRequest } from './adapterResultShape.ts';
import { LuaAdapterError } from './luaAdapterError.ts';
import { LuaVm, type LuaLogSink } from './luaVm.ts';
import type { CompletionRequest, CompletionResponse, ProviderSource, StreamDelta, StreamFraming, WireRequest } from './llmTypes.ts';

export type LuaAdapterOptions = Readonly<{ instructionBudget?: number; log?: LuaLogSink }>;

const REQUIRED_FUNCTIONS = ['transform_request', 'headers', 'transform_response', 'transform_stream_chunk'] as const;

export class LuaAdapter {
  readonly streamFraming: StreamFraming;
  private readonly vm: LuaVm;

  constructor(
    readonly name: string,
    script: string,
    options: LuaAdapterOptions = {},
  ) {
    this.vm = new LuaVm({ name, script, ...options });
    for (const fn of REQUIRED_FUNCTIONS) {
      if (!this.vm.hasFunction(fn))
        throw new LuaAdapterError('LUA_MISSING_FUNCTION', name, fn, `an adapter script must define ${REQUIRED_FUNCTIONS.join(', ')}`);
    }
    const framing = this.vm.getGlobal('framing');
    if (framing !== 'sse' && framing !== 'ndjson') {
      throw new LuaAdapterError(
        'ADAPTER_BAD_RESULT',
        name,
        'framing',
        `global 'framing' must be "sse" or "ndjson", got ${JSON.stringify(framing)}`,
      );
    }
    this.streamFraming = framing;
  }

  transformRequest(req: CompletionRequest, source: ProviderSource): WireRequest {
    return checkWireRequest(this.where('transform_request'), this.vm.call('transform_request', req, source));
  }

  headers(config: Readonly<{ apiKey?: string }>): Record<string, string> {
    return checkHeaders(this.where('headers'), this.vm.call('headers', config));
  }

  transformResponse(json: unknown): CompletionResponse {
    return checkCompletionResponse(this.where('transform_response'), this.vm.call('transform_response', json));
  }

  /** One SSE `data:` payload or one NDJSON line → a delta, or null when the chunk carries nothing. */
  transformStreamChunk(chunk: string): StreamDelta | null {
    return checkStreamDelta(this.where('transform_stream_chunk'), this.vm.call('transform_stream_chunk', chunk));
  }

  close(): void {
    this.vm.close();
  }

  private where(fn: string) {
    return { adapter: this.name, fn };
  }
}

/** Names of the adapter scripts shipped in this folder. */
export const BUILTIN_ADAPTERS = ['openai', 'anthropic', 'ollama'] as const;
export type BuiltinAdapterName = (typeof BUILTIN_ADAPTERS)[number];

/** Loads `adapters/llm/<name>.lua`. Names are `[a-z0-9_-]+` so a name can never escape the folder. */
export function loadAdapter(name: string, options: LuaAdapterOptions = {}): LuaAdapter {
  if (!/^[a-z0-9_-]+$/.test(name))
    throw new LuaAdapterError('ADAPTER_NOT_FOUND', name, '<load>', 'adapter names are lowercase letters, digits, _ and -');
  let script: string;
  try {
    script = readFileSync(new URL(`./${name}.lua`, import.meta.url), 'utf8');
  } catch {
    throw new LuaAdapterError(
      'ADAPTER_NOT_FOUND',
      name,
      '<load>',
      `no file adapters/llm/${name}.lua (built-in: ${BUILTIN_ADAPTERS.join(', ')})`,
    );
  }
  return new LuaAdapter(name, script, options);
}
