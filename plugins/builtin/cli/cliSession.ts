/**
 * One connection to the cli socket. Its memory is bounded whatever the client does: a request
 * line is at most MAX_LINE_BYTES; requests are read only while none is being served and fewer
 * than OUTPUT_HIGH_WATER_BYTES of replies are unread; a message is taken while fewer than
 * MAX_PENDING_MESSAGES wait for their reply, else it waits, and commands after it are served (an
 * /approve its replies wait for must get through) until a second message comes (otherwise the
 * socket is paused and the client's writes wait in the kernel); a client whose unread replies pass MAX_UNREAD_OUTPUT_BYTES is dropped, the reason in
 * the daemon's log. A client leaving at any moment ends its own session and nothing else.
 */
import type { Socket } from 'node:net';
import type { Timers } from '../../../events/index.ts';
import {
  type CliErrorCode,
  type CliReply,
  type CliRequest,
  formatBytes,
  MAX_LINE_BYTES,
  MAX_PENDING_MESSAGES,
  MAX_UNREAD_OUTPUT_BYTES,
  OUTPUT_HIGH_WATER_BYTES,
  parseCliRequest,
} from './cliWire.ts';
import { LineSplitter } from '../../protocol/lineSplitter.ts';

/** How long a refused client has to take its last reply before its socket is destroyed. */
const CLOSE_GRACE_MS = 2_000;

export type SessionHost = Readonly<{
  /** Does what a request asks and returns its reply; a thrown error becomes an `error` reply. */
  serve(request: CliRequest, session: string): Promise<CliReply>;
  log(line: string): void;
  timers: Timers;
}>;

export const errorReply = (code: CliErrorCode, message: string): CliReply => ({ type: 'error', code, message });

/**
 * Answers one last line, half-closes, and from then on drops whatever the client still sends;
 * the socket is destroyed when the client goes or after CLOSE_GRACE_MS. Not at once: a client
 * still writing would get EPIPE before it read the line, and lose it. Dropping rather than
 * pausing lets the client finish its write and close, and lets its close be seen. One that
 * already has replies unread is cut off now.
 */
export const closeWith = (socket: Socket, reply: CliReply, timers: Timers): void => {
  socket.on('error', () => undefined);
  if (!socket.writable || socket.writableLength > 0) {
    socket.destroy();
    return;
  }
  const cutOff = timers.setTimer(() => socket.destroy(), CLOSE_GRACE_MS);
  socket.once('close', () => timers.clearTimer(cutOff));
  socket.end(`${JSON.stringify(reply)}\n`);
  socket.resume();
};

export class CliSession {
  /** The user this session speaks for, once it said (`hello`, or its first message). */
  from: string | undefined;
  private readonly splitter = new LineSplitter(MAX_LINE_BYTES);
  private readonly queue: string[] = [];
  /** A message read while the session had its fill of unanswered ones: served when one ends. */
  private held: CliRequest | undefined;
  private serving = false;
  private pendingMessages = 0;
  private clientEnded = false;
  private over = false;

  constructor(
    readonly id: string,
    private readonly socket: Socket,
    private readonly host: SessionHost,
  ) {
    socket.on('data', (chunk: Buffer) => this.received(chunk));
    socket.on('drain', () => this.pump());
    // Half-closed: the client sent everything; its replies still go out, then the session ends.
    socket.on('end', () => {
      this.clientEnded = true;
      this.pump();
    });
    // EPIPE, ECONNRESET…: the client is gone, and only its session ends.
    socket.on('error', () => this.close());
    socket.on('close', () => {
      this.over = true;
    });
  }

  /** Whether the client is still there to receive replies. */
  get live(): boolean {
    return !this.over && this.socket.writable;
  }

  /** Sends a reply unless the client is gone; a client that does not read is dropped at the limit. */
  send(reply: CliReply): void {
    if (this.over || !this.socket.writable) return;
    this.socket.write(`${JSON.stringify(reply)}\n`);
    if (this.socket.writableLength > MAX_UNREAD_OUTPUT_BYTES) {
      this.drop(`it left more than ${formatBytes(MAX_UNREAD_OUTPUT_BYTES)} of replies unread`);
    }
  }

  /** The reply to one of this session's messages ended: the next message may be read. */
  replyEnded(): void {
    this.pendingMessages = Math.max(0, this.pendingMessages - 1);
    this.pump();
  }

  /** Ends the session at once (the daemon stopping, or the client gone). */
  close(): void {
    this.over = true;
    this.socket.destroy();
  }

  private drop(reason: string): void {
    if (this.over) return;
    this.host.log(`dropped cli session ${this.id}: ${reason}`);
    this.close();
  }

  private received(chunk: Buffer): void {
    if (this.over) return;
    const { lines, tooLong } = this.splitter.push(chunk);
    if (tooLong) {
      this.over = true;
      this.queue.length = 0;
      this.held = undefined;
      this.host.log(`refused cli session ${this.id}: a request line longer than ${formatBytes(MAX_LINE_BYTES)}`);
      closeWith(this.socket, errorReply('line_too_long', LINE_TOO_LONG), this.host.timers);
      return;
    }
    for (const line of lines) this.queue.push(line);
    this.pump();
  }

  private blocked(): boolean {
    return this.serving || this.socket.writableLength > OUTPUT_HIGH_WATER_BYTES;
  }

  /** Serves what was read, as far as the limits allow; reads more only when nothing waits. */
  private pump(): void {
    if (this.over) return;
    while (!this.blocked()) {
      if (this.held && this.pendingMessages < MAX_PENDING_MESSAGES) {
        const message = this.held;
        this.held = undefined;
        this.serve(message);
        continue;
      }
      const line = this.queue.shift();
      if (line === undefined) break;
      if (!line.trim()) continue;
      const request = parseCliRequest(line);
      if ('error' in request) this.send(errorReply('bad_request', request.error));
      else if (request.type === 'message') {
        // One message waits for a place; a second one waits unread behind it.
        if (this.held) {
          this.queue.unshift(line);
          break;
        }
        this.held = request;
        // A command goes past a waiting message: the /approve its replies wait for must get through.
      } else this.serve(request);
    }
    if (this.over) return; // a send above dropped the client
    const waiting = this.queue.length > 0 || this.blocked();
    if (waiting) this.socket.pause();
    else if (!this.clientEnded) this.socket.resume();
    else if (this.pendingMessages === 0 && !this.socket.writableEnded) this.socket.end();
  }

  private serve(request: CliRequest): void {
    this.serving = true;
    if (request.type === 'message') this.pendingMessages += 1;
    this.host
      .serve(request, this.id)
      .then(
        (reply) => this.send(reply),
        (error: unknown) => {
          if (request.type === 'message') this.pendingMessages = Math.max(0, this.pendingMessages - 1);
          this.send(errorReply('failed', (error as Error).message));
        },
      )
      .finally(() => {
        this.serving = false;
        this.pump();
      });
  }
}

const LINE_TOO_LONG =
  `a request line is at most ${formatBytes(MAX_LINE_BYTES)} (${MAX_LINE_BYTES} bytes); this one was longer, so the ` +
  "connection is closed. Send a shorter message (long text can go in a file under the files plugin's root)";
