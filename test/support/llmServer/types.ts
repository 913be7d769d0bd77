/** Types of the scripted test LLM server: what a test scripts, and what the server records. */
import type { IncomingHttpHeaders } from 'node:http';

/** The three wire formats the server speaks. */
export type Protocol = 'openai' | 'anthropic' | 'ollama';

/** Provider-neutral finish reason, mapped to `stop_reason` / `finish_reason` / `done_reason` per protocol. */
export type FinishReason = 'stop' | 'tool_calls' | 'length';

export type ScriptedToolCall = Readonly<{ id?: string; name: string; arguments: Readonly<Record<string, unknown>> }>;

/** A successful answer. `slow`, `holdAfterChunks` and `disconnectAfterChunks` shape how it is delivered. */
export type ScriptedCompletion = Readonly<{
  text?: string;
  /** Streamed: the text in exactly these pieces (they must join to `text`); default word-sized pieces. */
  pieces?: readonly string[];
  toolCalls?: readonly ScriptedToolCall[];
  /** Default: `tool_calls` when there are tool calls, else `stop`. */
  finishReason?: FinishReason;
  /** Default: estimated from the request body and the reply (about four characters a token). */
  usage?: Readonly<{ inputTokens?: number; outputTokens?: number }>;
  /** Space stream chunks by this delay; a non-streamed answer waits it once before responding. */
  slow?: Readonly<{ chunkDelayMs: number }>;
  /** Streamed: wait after this many stream frames until `release()` (or until the client goes away); non-streamed: ignored. */
  holdAfterChunks?: number;
  /** Destroy the socket after this many stream frames (SSE events or NDJSON lines); non-streamed: before any byte. */
  disconnectAfterChunks?: number;
}>;

/** An HTTP error, shaped as the protocol's error JSON unless `body` is given. */
export type ScriptedError = Readonly<{
  status: 400 | 401 | 403 | 404 | 429 | 500 | 502 | 503 | 529;
  message?: string;
  /** Sent verbatim as JSON instead of the protocol-shaped error. */
  body?: unknown;
  headers?: Readonly<Record<string, string>>;
}>;

/** Never answer; the request stays open until the client aborts or the server closes. */
export type ScriptedHang = Readonly<{ hang: true }>;

export type ScriptedReply = ScriptedCompletion | ScriptedError | ScriptedHang;

/** A reply taken by the first request that satisfies `when` (made from the request when `reply` is a function); with `repeat` it is never used up. */
export type MatchedReply = Readonly<{
  when: (request: RecordedRequest) => boolean;
  reply: ScriptedReply | ((request: RecordedRequest) => ScriptedReply);
  repeat?: boolean;
}>;

export type ScriptEntry = ScriptedReply | MatchedReply;
export type Script = readonly ScriptEntry[];

export type RequestOutcome =
  | 'pending' // still being answered
  | 'completed' // the whole answer was written
  | 'aborted' // the client went away before the answer was complete
  | 'disconnected' // the server cut the socket as scripted
  | 'error' // a scripted HTTP error was sent
  | 'exhausted' // no scripted reply was left for this request (answered 500)
  | 'badRequest' // the body was not JSON (answered 400)
  | 'notFound'; // no protocol lives at this path (answered 404)

/** One request as the server saw it. Times are `performance.now()` in this process. */
export type RecordedRequest = {
  readonly index: number;
  readonly method: string;
  readonly path: string;
  readonly headers: IncomingHttpHeaders;
  /** The parsed JSON body; undefined when it was empty or not JSON. */
  readonly body: unknown;
  readonly rawBody: string;
  readonly protocol: Protocol | undefined;
  readonly stream: boolean;
  readonly receivedAt: number;
  reply: ScriptedReply | undefined;
  status: number | undefined;
  outcome: RequestOutcome;
  /** Stream frames written (SSE events or NDJSON lines). */
  chunksWritten: number;
  finishedAt?: number;
  /** When the server noticed the client closed the connection before the answer was complete. */
  abortedAt?: number;
};

export type LlmServerOptions = Readonly<{
  /** The port on 127.0.0.1 to listen on; default any free one. */
  port?: number;
  /** Path prefix of the OpenAI routes; default `/v1`. */
  openAiPrefix?: string;
  /** The models a GET of the models route lists; default ['test-model']. */
  models?: readonly string[];
}>;

export interface LlmServer {
  /** `http://127.0.0.1:<port>` */
  readonly url: string;
  readonly port: number;
  /** The base URL a client library for `protocol` expects (OpenAI: with the prefix; others: the origin). */
  baseUrl(protocol: Protocol): string;
  /** Every request in arrival order; records are updated in place as answers progress. */
  readonly requests: readonly RecordedRequest[];
  /** Replace what is left of the script. */
  setScript(script: Script): void;
  /** Lets every stream waiting at its `holdAfterChunks` go on. */
  release(): void;
  /** Resolves with request `index` once it has arrived and reached a final outcome. */
  settled(index: number): Promise<RecordedRequest>;
  /** Resolves once `count` requests have arrived (their bodies read). */
  received(count: number): Promise<readonly RecordedRequest[]>;
  /** Stop listening and cut every open connection. */
  close(): Promise<void>;
}
