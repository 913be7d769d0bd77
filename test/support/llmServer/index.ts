/** A scripted local LLM server for tests: real HTTP, three wire formats, recorded requests. */
export { afterToolResult, lastUserText, messagesOf, type RecordedMessage } from './recordedMessages.ts';
export { startLlmServer } from './startLlmServer.ts';
export type {
  FinishReason,
  LlmServer,
  LlmServerOptions,
  MatchedReply,
  Protocol,
  RecordedRequest,
  RequestOutcome,
  Script,
  ScriptEntry,
  ScriptedCompletion,
  ScriptedError,
  ScriptedHang,
  ScriptedReply,
  ScriptedToolCall,
} from './types.ts';
