import { describe, expect, it } from 'vitest';
import { createFrameDecoder } from '../../adapters/llm/streamFraming.ts';

function decodeInPieces(framing: 'sse' | 'ndjson', body: string, size: number): string[] {
  const d = createFrameDecoder(framing);
  const out: string[] = [];
  for (let i = 0; i < body.length; i += size) out.push(...d.push(body.slice(i, i + size)));
  return [...out, ...d.end()];
}

describe('stream framing', () => {
  const sse =
    'event: message_start\r\ndata: {"a":1}\r\n\r\n: keep-alive\n\nevent: ping\ndata: {"type":"ping"}\n\ndata: line1\ndata: line2\n\ndata: [DONE]\n\n';

  it('given an SSE body cut at every possible size, then the same data payloads, comments and event names dropped', () => {
    for (const size of [1, 2, 3, 7, 1000]) {
      expect(decodeInPieces('sse', sse, size)).toStrictEqual(['{"a":1}', '{"type":"ping"}', 'line1\nline2', '[DONE]']);
    }
  });

  it('given an SSE body without a final blank line, then end() flushes the last event', () => {
    expect(decodeInPieces('sse', 'data: x\n\ndata: y', 4)).toStrictEqual(['x', 'y']);
  });

  it('given NDJSON cut anywhere with blank lines and no final newline, then one payload per line', () => {
    for (const size of [1, 5, 1000]) {
      expect(decodeInPieces('ndjson', '{"a":1}\r\n\n{"b":2}\n{"c":3}', size)).toStrictEqual(['{"a":1}', '{"b":2}', '{"c":3}']);
    }
  });
});
