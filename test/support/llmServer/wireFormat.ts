/** What each protocol module provides: its JSON answer, its stream frames, and its error shape; pure. */
import type { ResolvedReply } from './resolveReply.ts';
import type { Protocol } from './types.ts';

export interface WireFormat {
  readonly protocol: Protocol;
  readonly streamContentType: string;
  /** Whether a request without a `stream` field streams (Ollama: yes). */
  readonly streamsByDefault: boolean;
  /** The non-streamed JSON answer. */
  body(reply: ResolvedReply): unknown;
  /** The streamed answer, one fully framed string per chunk (SSE event or NDJSON line). */
  frames(reply: ResolvedReply): string[];
  /** The protocol's error JSON for an HTTP status. */
  error(status: number, message: string): unknown;
}

export const sse = (data: unknown, event?: string): string =>
  `${event === undefined ? '' : `event: ${event}\n`}data: ${typeof data === 'string' ? data : JSON.stringify(data)}\n\n`;
