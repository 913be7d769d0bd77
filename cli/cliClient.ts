/** A client of the cli plugin's socket: what waiter and `homed plugins` speak to a running homed. */
import { existsSync } from 'node:fs';
import { createConnection, type Socket } from 'node:net';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { HologramError } from '../events/index.ts';
import { CLI_SOCKET_FILE, type CliReply, type CliRequest } from '../plugins/builtin/cli/cliWire.ts';

export class DaemonNotRunning extends HologramError {
  readonly code = 'DAEMON_NOT_RUNNING';
  constructor(dataDir: string, why: string) {
    super(`no homed is running on ${dataDir} (${why}); start it with 'homed run --data ${dataDir}'`);
  }
}

export class CliClient {
  private readonly listeners = new Set<(reply: CliReply) => void>();
  private closedListeners = new Set<() => void>();

  private constructor(private readonly socket: Socket) {
    createInterface({ input: socket }).on('line', (line) => {
      let reply: CliReply;
      try {
        reply = JSON.parse(line) as CliReply;
      } catch {
        reply = { type: 'error', message: `the daemon sent a line that is not JSON: ${line.slice(0, 80)}` };
      }
      for (const listener of [...this.listeners]) listener(reply);
    });
    socket.on('close', () => {
      for (const listener of [...this.closedListeners]) listener();
    });
  }

  /** @throws DaemonNotRunning when nothing listens on the data dir's socket. */
  static connect(dataDir: string): Promise<CliClient> {
    const path = join(dataDir, CLI_SOCKET_FILE);
    if (!existsSync(path)) return Promise.reject(new DaemonNotRunning(dataDir, `${path} does not exist`));
    return new Promise((resolve, reject) => {
      const socket = createConnection(path);
      socket.once('connect', () => {
        socket.removeAllListeners('error');
        socket.on('error', () => undefined);
        resolve(new CliClient(socket));
      });
      socket.once('error', (error) => reject(new DaemonNotRunning(dataDir, `${path}: ${error.message}`)));
    });
  }

  send(request: CliRequest): void {
    this.socket.write(`${JSON.stringify(request)}\n`);
  }

  onReply(listener: (reply: CliReply) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  onClose(listener: () => void): void {
    this.closedListeners.add(listener);
  }

  /** Sends a request and resolves with the first reply `accept` returns true for (an error reply rejects). */
  ask<T extends CliReply>(request: CliRequest, accept: (reply: CliReply) => reply is T): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      const off = this.onReply((reply) => {
        if (reply.type === 'error') {
          off();
          reject(new HologramErrorFromDaemon(reply.message));
        } else if (accept(reply)) {
          off();
          resolve(reply);
        }
      });
      this.onClose(() => reject(new HologramErrorFromDaemon('the daemon closed the connection')));
      this.send(request);
    });
  }

  close(): void {
    this.socket.end();
  }
}

export class HologramErrorFromDaemon extends HologramError {
  readonly code = 'DAEMON_REFUSED';
}

export const replyOfType =
  <K extends CliReply['type']>(type: K) =>
  (reply: CliReply): reply is Extract<CliReply, { type: K }> =>
    reply.type === type;
