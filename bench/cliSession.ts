/**
 * One session on a running daemon's cli socket (`DIR/homed.sock`), speaking its newline-
 * delimited JSON the way waiter does: a message out, then `accepted`, `chunk`s and an `end`.
 */
import { createConnection, type Socket } from 'node:net';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { CLI_SOCKET_FILE, type CliReply } from '../plugins/builtin/cli/cliWire.ts';

type Pending = { chunks: string[]; resolve: (reply: string) => void; reject: (error: Error) => void };

export class CliSession {
  private pending: Pending | undefined;

  private constructor(private readonly socket: Socket) {
    createInterface({ input: socket }).on('line', (line) => this.onLine(JSON.parse(line) as CliReply));
    const fail = (error: Error): void => {
      this.pending?.reject(error);
      this.pending = undefined;
    };
    socket.on('error', fail);
    socket.on('close', () => fail(new Error('the daemon closed the cli socket')));
  }

  static connect = (dataDir: string): Promise<CliSession> =>
    new Promise((resolve, reject) => {
      const socket = createConnection(join(dataDir, CLI_SOCKET_FILE));
      socket.once('error', reject);
      socket.once('connect', () => {
        socket.off('error', reject);
        resolve(new CliSession(socket));
      });
    });

  /** Sends `text` as `from` and resolves with the streamed reply once it has ended; rejects when it ended without an answer. */
  ask(text: string, from: string): Promise<string> {
    if (this.pending) return Promise.reject(new Error('CliSession.ask: the previous message has no reply yet'));
    return new Promise((resolve, reject) => {
      this.pending = { chunks: [], resolve, reject };
      this.socket.write(`${JSON.stringify({ type: 'message', text, from })}\n`);
    });
  }

  close(): void {
    this.socket.destroy();
  }

  private onLine(reply: CliReply): void {
    const pending = this.pending;
    if (!pending) return;
    if (reply.type === 'chunk') pending.chunks.push(reply.text);
    if (reply.type !== 'end' && reply.type !== 'error') return;
    this.pending = undefined;
    // An answered turn ends with an empty text; anything else says why there was no answer.
    if (reply.type === 'end' && reply.text === '') pending.resolve(pending.chunks.join(''));
    else pending.reject(new Error(`the daemon answered no reply: ${reply.type === 'end' ? reply.text : reply.message}`));
  }
}
