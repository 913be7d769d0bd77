/**
 * A plugin's stderr, line by line, each line bounded: a line longer than STDERR_LINE_AT_MOST
 * characters is given cut there, saying so, and the rest of it up to its newline is dropped. A
 * plugin that writes without ever ending a line cannot grow the daemon's memory with it.
 */
import type { Readable } from 'node:stream';

export const STDERR_LINE_AT_MOST = 8 * 1024;

export const readStderrLines = (stream: Readable, onLine: (line: string) => void, atMost = STDERR_LINE_AT_MOST): void => {
  let pending = '';
  /** Set once the line in progress was cut: its rest is dropped until its newline. */
  let cutting = false;
  const take = (piece: string, ended: boolean): void => {
    if (!cutting) {
      const room = atMost - pending.length;
      if (piece.length > room) {
        onLine(`${pending}${piece.slice(0, room)} … (cut: a line of stderr holds at most ${atMost} characters)`);
        pending = '';
        cutting = true;
      } else pending += piece;
    }
    if (!ended) return;
    if (!cutting) onLine(pending.endsWith('\r') ? pending.slice(0, -1) : pending);
    pending = '';
    cutting = false;
  };
  stream.setEncoding('utf8');
  stream.on('data', (chunk: string) => {
    let start = 0;
    for (let newline = chunk.indexOf('\n'); newline >= 0; newline = chunk.indexOf('\n', start)) {
      take(chunk.slice(start, newline), true);
      start = newline + 1;
    }
    take(chunk.slice(start), false);
  });
  stream.on('end', () => {
    if (pending !== '' && !cutting) onLine(pending);
    pending = '';
  });
};
