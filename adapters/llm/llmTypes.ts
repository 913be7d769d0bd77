/**
 * Provider-neutral LLM types. Every wire format (OpenAI, Anthropic, Ollama, ...) is translated
 * to and from these by a Lua adapter; nothing above `adapters/llm/` sees a provider's JSON.
 */

/** A JSON value as it crosses the JS ↔ Lua boundary. */
export type JsonValue = null | boolean | number | string | JsonValue[] | { [key: string]: JsonValue };

export type ChatRole = 'system' | 'user' | 'assistant' | 'tool';

export type ToolCall = Readonly<{
  id: string;
  name: string;
  arguments: Record<string, unknown>;
}>;

export type ChatMessage = Readonly<{
  role: ChatRole;
  content: string;
  /** Tool calls the assistant made in this message (role 'assistant' only). */
  toolCalls?: readonly ToolCall[];
  /** The call this message answers (role 'tool' only). */
  toolCallId?: string;
}>;

export type ToolDefinition = Readonly<{
  name: string;
  description: string;
  /** A JSON schema object describing the arguments. */
  parameters: Record<string, unknown>;
}>;

export type CompletionRequest = Readonly<{
  model: string;
  messages: readonly ChatMessage[];
  tools?: readonly ToolDefinition[];
  stream: boolean;
  maxTokens?: number;
  temperature?: number;
}>;

export type FinishReason = 'stop' | 'tool_calls' | 'length' | 'error';

export const FINISH_REASONS: readonly FinishReason[] = ['stop', 'tool_calls', 'length', 'error'];

export type Usage = Readonly<{ inputTokens: number; outputTokens: number }>;

export type CompletionResponse = Readonly<{
  text: string;
  toolCalls: readonly ToolCall[];
  finishReason: FinishReason;
  usage?: Usage;
}>;

/**
 * One fragment of a tool call in a stream. Fragments with the same `index` belong to the same
 * call; a fragment without `index` starts a new call (protocols that send whole calls per chunk).
 */
export type ToolCallDelta = Readonly<{
  index?: number;
  id?: string;
  name?: string;
  argumentsFragment?: string;
}>;

/** What one stream chunk contributes. Usage may arrive in parts (Anthropic: input first, output last). */
export type StreamDelta = Readonly<{
  text?: string;
  toolCalls?: readonly ToolCallDelta[];
  finishReason?: FinishReason;
  usage?: Partial<Usage>;
  /** A provider-reported error inside the stream. */
  error?: string;
  /** The stream is complete; no further chunks are expected. */
  done?: boolean;
}>;

/** Where a request is going; passed to the adapter's `transform_request`. */
export type ProviderSource = Readonly<{ baseUrl: string; model: string }>;

/** The wire request an adapter produces: a path relative to the source's base URL and a JSON body. */
export type WireRequest = Readonly<{ path: string; body: unknown }>;

export type StreamFraming = 'sse' | 'ndjson';
