/**
 * Raw clients of a daemon's cli socket, for tests that behave as no polite client would: open
 * many, write without reading, leave at any moment. And the daemon's resident memory.
 */
import { readFileSync } from 'node:fs';
import { createConnection, type Socket } from 'node:net';
import { join } from 'node:path';
import type { CliReply } from './homedSession.ts';

/** A connected socket to `dir`'s homed.sock; its errors are recorded, never thrown. */
export const connectCli = (dir: string): Promise<Socket & { errors: string[] }> =>
  new Promise((resolve, reject) => {
    const socket = Object.assign(createConnection(join(dir, 'homed.sock')), { errors: [] as string[] });
    socket.once('error', reject);
    socket.once('connect', () => {
      socket.off('error', reject);
      socket.on('error', (error: NodeJS.ErrnoException) => socket.errors.push(error.code ?? error.message));
      resolve(socket);
    });
  });

/** The replies a socket receives, parsed as they come; `next()` waits for the next one (or null at close). */
export const repliesOf = (socket: Socket) => {
  const replies: CliReply[] = [];
  const waiters: ((reply: CliReply | null) => void)[] = [];
  let buffered = '';
  let read = 0;
  let closed = false;
  socket.setEncoding('utf8');
  socket.on('data', (text: string) => {
    buffered += text;
    let newline = buffered.indexOf('\n');
    while (newline !== -1) {
      replies.push(JSON.parse(buffered.slice(0, newline)) as CliReply);
      buffered = buffered.slice(newline + 1);
      newline = buffered.indexOf('\n');
    }
    while (waiters.length > 0 && read < replies.length) waiters.shift()!(replies[read++]!);
  });
  socket.on('close', () => {
    closed = true;
    for (const waiter of waiters.splice(0)) waiter(null);
  });
  return {
    replies,
    next: (): Promise<CliReply | null> =>
      new Promise((resolve) => {
        if (read < replies.length) resolve(replies[read++]!);
        else if (closed) resolve(null);
        else waiters.push(resolve);
      }),
    closed: (): Promise<void> => new Promise((resolve) => (closed ? resolve() : socket.once('close', () => resolve()))),
  };
};

/** A request line of the cli wire. */
export const requestLine = (request: Record<string, unknown>): string => `${JSON.stringify(request)}\n`;

/** Resident memory of a process, in MB (Linux). */
export const rssMb = (pid: number): number => {
  const match = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  if (!match) throw new Error(`no VmRSS for pid ${pid}`);
  return Number(match[1]) / 1024;
};
