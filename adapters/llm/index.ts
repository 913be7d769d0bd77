/**
 * Public surface of the LLM adapter layer: provider-neutral types, Lua wire-format adapters run
 * in a sandboxed fengari VM, stream framing and accumulation. No network I/O happens here.
 */
export type {
  ChatMessage,
  ChatRole,
  CompletionRequest,
  CompletionResponse,
  FinishReason,
  JsonValue,
  ProviderSource,
  StreamDelta,
  StreamFraming,
  ToolCall,
  ToolCallDelta,
  ToolDefinition,
  Usage,
  WireRequest,
} from './llmTypes.ts';
export { FINISH_REASONS } from './llmTypes.ts';
export { LuaAdapterError, isLuaAdapterError, type LuaAdapterErrorCode } from './luaAdapterError.ts';
export { LuaVm, DEFAULT_INSTRUCTION_BUDGET, type LuaLogLevel, type LuaLogSink, type LuaVmOptions } from './luaVm.ts';
export { LuaAdapter, loadAdapter, BUILTIN_ADAPTERS, type BuiltinAdapterName, type LuaAdapterOptions } from './luaAdapter.ts';
export { createStreamAccumulator, accumulateStream, StreamAccumulationError, type StreamAccumulator } from './streamAccumulator.ts';
export { createFrameDecoder, type FrameDecoder } from './streamFraming.ts';
