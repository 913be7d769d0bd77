/**
 * Splits a streamed HTTP body into the chunks adapters take: SSE `data:` payloads (one per event,
 * multi-line data joined with '\n') or NDJSON lines. Pure and incremental: text may arrive cut
 * anywhere, including inside a line or between '\r' and '\n'.
 */
import type { StreamFraming } from './llmTypes.ts';

export type FrameDecoder = Readonly<{
  /** Feeds decoded text; returns the payloads completed by it. */
  push(text: string): string[];
  /** The body ended; returns whatever complete payload was still pending. */
  end(): string[];
}>;

export function createFrameDecoder(framing: StreamFraming): FrameDecoder {
  let buffer = '';
  let data: string[] | null = null;

  function line(raw: string, out: string[]): void {
    const l = raw.endsWith('\r') ? raw.slice(0, -1) : raw;
    if (framing === 'ndjson') {
      if (l.trim() !== '') out.push(l);
      return;
    }
    if (l === '') {
      if (data !== null) out.push(data.join('\n'));
      data = null;
      return;
    }
    if (l.startsWith(':')) return; // comment / keep-alive
    const colon = l.indexOf(':');
    const field = colon < 0 ? l : l.slice(0, colon);
    let value = colon < 0 ? '' : l.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    if (field === 'data') {
      data ??= [];
      data.push(value);
    }
  }

  return {
    push(text) {
      const out: string[] = [];
      buffer += text;
      for (let nl = buffer.indexOf('\n'); nl >= 0; nl = buffer.indexOf('\n')) {
        line(buffer.slice(0, nl), out);
        buffer = buffer.slice(nl + 1);
      }
      return out;
    },
    end() {
      const out: string[] = [];
      if (buffer !== '') line(buffer, out);
      buffer = '';
      if (framing === 'sse') line('', out);
      return out;
    },
  };
}
