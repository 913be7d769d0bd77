/** A plugin's stderr read line by line: lines as written, across chunks, and a line too long cut once, flagged so, the next one whole (through the one bounded LineSplitter). */
import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { readStderrLines } from '../../plugins/host/stderrLines.ts';

const linesOf = async (chunks: readonly string[], atMost = 10): Promise<string[]> => {
  const stream = new PassThrough();
  const lines: string[] = [];
  readStderrLines(stream, (line, cutShort) => lines.push(cutShort ? `${line} (cut)` : line), atMost);
  for (const chunk of chunks) stream.write(chunk);
  stream.end();
  await new Promise((resolve) => stream.on('end', resolve));
  return lines;
};

describe('plugin stderr lines', () => {
  it('gives lines as written, across chunks, a last one without its newline too', async () => {
    expect(await linesOf(['one\ntw', 'o\r\n', '\nthree'])).toEqual(['one', 'two', '', 'three']);
  });

  it('cuts a line longer than the bound once, drops its rest, and gives the next line whole', async () => {
    const lines = await linesOf(['abcdefgh', 'ijklmnop'.repeat(1000), 'qrs\nnext\n']);
    expect(lines).toEqual(['abcdefghij (cut)', 'next']);
  });

  it('holds at most the bound of a line that never ends', async () => {
    const lines = await linesOf(Array.from({ length: 2000 }, () => 'x'.repeat(1000)));
    expect(lines).toHaveLength(1);
    expect(lines[0]!.length).toBeLessThan(100);
  });
});
