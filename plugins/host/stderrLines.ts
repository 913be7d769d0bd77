/**
 * A plugin's stderr, line by line, each line bounded: a line longer than STDERR_LINE_AT_MOST
 * bytes is given cut there, flagged so, and the rest of it up to its newline is dropped. A
 * plugin that writes without ever ending a line cannot grow the daemon's memory with it.
 */
import type { Readable } from 'node:stream';
import { LineSplitter } from '../protocol/lineSplitter.ts';

export const STDERR_LINE_AT_MOST = 8 * 1024;

/** What follows a line of stderr cut at `atMost` bytes where it is shown. */
export const stderrCutNote = (atMost = STDERR_LINE_AT_MOST): string => ` … (cut: a line of stderr holds at most ${atMost} bytes)`;

export const readStderrLines = (
  stream: Readable,
  onLine: (line: string, cutShort: boolean) => void,
  atMost = STDERR_LINE_AT_MOST,
): void => {
  const splitter = new LineSplitter(atMost, 'cut');
  stream.on('data', (chunk: Buffer | string) => {
    const { lines, cut } = splitter.push(typeof chunk === 'string' ? Buffer.from(chunk) : chunk);
    for (const [i, line] of lines.entries()) onLine(line, cut.includes(i));
  });
  stream.on('end', () => {
    const last = splitter.end();
    if (last !== undefined) onLine(last, false);
  });
};
