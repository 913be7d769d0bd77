/**
 * A client of the cli plugin's socket: what waiter and `homed plugins` speak to a running homed.
 * Every way the connection can fail (no daemon, a refused or broken connection, an error
 * reply, a garbled line) rejects the pending request with a typed error, never an unhandled one.
 */
import { existsSync } from 'node:fs';
import { createConnection, type Socket } from 'node:net';
import { join, resolve } from 'node:path';
import { CLI_SOCKET_FILE, type CliReply, type CliRequest, formatBytes, MAX_LINE_BYTES } from '../plugins/builtin/cli/cliWire.ts';
import { LineSplitter } from '../plugins/protocol/lineSplitter.ts';
import { connectError, DaemonConnectionLost, DaemonNotRunning, DaemonRefused } from './daemonErrors.ts';
import { refuseNonDirectory } from './dataDirKind.ts';
import { visibleControls, withVisibleControls } from '../events/visibleControls.ts';

/** Longest reply line the client takes: replies carry whole answers and plugin lists, so more than a request. */
const MAX_REPLY_LINE_BYTES = 64 * 1024 * 1024;

export class CliClient {
  private readonly listeners = new Set<(reply: CliReply) => void>();
  private readonly closedListeners = new Set<(lost: DaemonConnectionLost) => void>();
  private readonly splitter = new LineSplitter(MAX_REPLY_LINE_BYTES);
  private lastError: NodeJS.ErrnoException | undefined;
  /** Set once the connection ended before `close()`: every later request fails with it at once. */
  private lost: DaemonConnectionLost | undefined;
  private closing = false;

  private constructor(
    private readonly socket: Socket,
    private readonly dataDir: string,
    private readonly reviver: ((key: string, value: unknown) => unknown) | undefined,
  ) {
    socket.on('data', (chunk: Buffer) => {
      const { lines, tooLong } = this.splitter.push(chunk);
      for (const line of lines) this.received(line);
      if (tooLong) {
        this.lastError = Object.assign(new Error(`a reply line longer than ${formatBytes(MAX_REPLY_LINE_BYTES)}`), {
          code: 'EMSGSIZE',
        });
        socket.destroy();
      }
    });
    socket.on('error', (error: NodeJS.ErrnoException) => {
      this.lastError = error;
    });
    socket.on('close', () => {
      if (this.closing) return;
      // EPIPE or ECONNRESET only say that homed closed its side, which it does when out of descriptors.
      const code = this.lastError?.code;
      const why =
        this.lastError && code !== 'EPIPE' && code !== 'ECONNRESET'
          ? `${code ?? 'error'}: ${this.lastError.message}`
          : `homed closed it${code ? ` (${code})` : ''}: it stopped, or is out of file descriptors`;
      const lost = new DaemonConnectionLost(this.dataDir, why);
      this.lost = lost;
      for (const listener of [...this.closedListeners]) listener(lost);
    });
  }

  /**
   * `forTerminal`: the replies go to a terminal, so every string in them has its control
   * characters made visible (events/visibleControls.ts) before anything reads it.
   * @throws DaemonNotRunning when nothing listens on the data dir's socket; DaemonUnreachable when it cannot be reached.
   */
  static connect(dataDir: string, { forTerminal = false }: Readonly<{ forTerminal?: boolean }> = {}): Promise<CliClient> {
    const path = join(dataDir, CLI_SOCKET_FILE);
    try {
      // A data dir that is a file: no homed could be started on it, so saying to start one would mislead.
      refuseNonDirectory(resolve(dataDir));
    } catch (error) {
      return Promise.reject(error);
    }
    if (!existsSync(path)) return Promise.reject(new DaemonNotRunning(dataDir, `${path} does not exist`));
    return new Promise((resolve, reject) => {
      const socket = createConnection(path);
      socket.once('connect', () => {
        socket.removeAllListeners('error');
        resolve(new CliClient(socket, dataDir, forTerminal ? withVisibleControls : undefined));
      });
      socket.once('error', (error: NodeJS.ErrnoException) => reject(connectError(dataDir, path, error)));
    });
  }

  /**
   * Writes a request; a request longer than the daemon takes is refused here, before it is sent.
   * @throws DaemonRefused for a request that is too long; DaemonConnectionLost once the connection is gone.
   */
  send(request: CliRequest): void {
    const line = JSON.stringify(request);
    if (Buffer.byteLength(line) > MAX_LINE_BYTES) {
      throw new DaemonRefused(
        `this ${request.type} is ${formatBytes(Buffer.byteLength(line))} as a request, and homed takes at most ${formatBytes(MAX_LINE_BYTES)} per request; send a shorter one`,
      );
    }
    if (this.lost) throw this.lost;
    this.socket.write(`${line}\n`);
  }

  onReply(listener: (reply: CliReply) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Called once if the connection ends before `close()`: with why, as the error to report. */
  onClose(listener: (lost: DaemonConnectionLost) => void): () => void {
    this.closedListeners.add(listener);
    return () => this.closedListeners.delete(listener);
  }

  /** Sends a request and resolves with the first reply `accept` returns true for (an error reply rejects). */
  ask<T extends CliReply>(request: CliRequest, accept: (reply: CliReply) => reply is T): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      const done = () => {
        off();
        offClose();
      };
      const off = this.onReply((reply) => {
        if (reply.type === 'error') {
          done();
          reject(new DaemonRefused(reply.message));
        } else if (accept(reply)) {
          done();
          resolve(reply);
        }
      });
      const offClose = this.onClose((lost) => {
        done();
        reject(lost);
      });
      try {
        this.send(request);
      } catch (error) {
        done();
        reject(error);
      }
    });
  }

  close(): void {
    this.closing = true;
    this.socket.end();
  }

  private received(line: string): void {
    let reply: CliReply;
    try {
      reply = JSON.parse(line, this.reviver) as CliReply;
    } catch {
      const shown = line.slice(0, 80);
      reply = { type: 'error', message: `the daemon sent a line that is not JSON: ${this.reviver ? visibleControls(shown) : shown}` };
    }
    for (const listener of [...this.listeners]) listener(reply);
  }
}

export const replyOfType =
  <K extends CliReply['type']>(type: K) =>
  (reply: CliReply): reply is Extract<CliReply, { type: K }> =>
    reply.type === type;
