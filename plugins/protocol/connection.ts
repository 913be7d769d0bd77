/**
 * One end of a plugin conversation over a readable + writable byte stream (a child's stdio,
 * or a PassThrough pair in tests). Whatever the peer sends, the connection never throws at
 * it: garbage is reported through `on('protocolError')` (and answered with an `error` frame
 * when it carried a request id), and every pending request settles exactly once. Bytes that
 * are not frames at all (FRAMING_LOST) close the connection at once.
 */
import type { Readable, Writable } from 'node:stream';
import type { Timers } from '../../events/index.ts';
import { decodeBody } from './codec.ts';
import {
  AnswersUnread,
  ConnectionClosed,
  describeThrown,
  FramingLost,
  FrameTooLarge,
  HandshakeTimedOut,
  MalformedFrame,
  NotifyHandlerFailed,
  type PluginProtocolError,
  PluginRequestFailed,
  ProtocolVersionMismatch,
  RequestTimedOut,
  UnexpectedMessage,
  UnknownMessageType,
  UnmatchedResponse,
} from './errors.ts';
import { DEFAULT_MAX_FRAME_BYTES, encodeFrame, FrameDecoder } from './framing.ts';
import { parseMessage, PROTOCOL_VERSION, WIRE_ERROR_CODES, type HelloMessage, type Message, type WelcomeMessage } from './messages.ts';

/**
 * Where timeouts come from: the kernel's own `Timers` (the host passes the kernel's; tests pass
 * manual ones). The protocol ships standalone in the plugin SDK, so a plugin process that gives
 * none gets the global timers.
 */
export type { Timers };

export const globalTimers: Timers = {
  setTimer: (fire, ms) => setTimeout(fire, ms),
  clearTimer: (handle) => clearTimeout(handle as ReturnType<typeof setTimeout>),
};

export type ConnectionOptions = Readonly<{
  timers?: Timers;
  maxFrameBytes?: number;
  /** Timeout of a request that names none. */
  defaultRequestTimeoutMs?: number;
  /** End the writable on close (default true; it tells a child its stdin is done). */
  endOnClose?: boolean;
}>;

/** Serves the peer's requests: return (or resolve) the result, or throw an error whose string `code` goes on the wire. */
export type RequestHandler = (method: string, params: unknown) => unknown;
export type NotifyHandler = (method: string, params: unknown) => void;

type Events = {
  protocolError: (error: PluginProtocolError) => void;
  bye: (reason: string) => void;
  close: (reason: string) => void;
};

const isThenable = (value: unknown): value is PromiseLike<unknown> =>
  typeof value === 'object' && value !== null && typeof (value as { then?: unknown }).then === 'function';

type Pending = { method: string; resolve: (result: unknown) => void; reject: (error: Error) => void; timer: unknown };

type Waiter<T> = { settle: (message: T) => void; fail: (error: Error) => void };

const LATE_IDS_REMEMBERED = 1024;
/** A handler's error message is cut to this length, so the error frame always fits. */
/**
 * The most of an error message one side sends: generous, for the kernel scrubs a tool's error of
 * secret values before it cuts it to a few lines (cut here first at 16 KiB, an honest tool's error
 * echoing what it was filled kept all of a value but its last characters).
 */
const MAX_ERROR_MESSAGE_CHARS = 512 * 1024;
/** Our frames the peer may leave unread before the connection gives up on it (AnswersUnread). */
export const MAX_UNREAD_BYTES = 16 * 1024 * 1024;
/** The peer's requests served at once: past this, its bytes are not read until half are answered, so it waits. */
export const MAX_SERVING = 64;
export const DEFAULT_REQUEST_TIMEOUT_MS = 30_000;
export const DEFAULT_HANDSHAKE_TIMEOUT_MS = 10_000;

export class PluginConnection {
  private readonly decoder: FrameDecoder;
  private readonly timers: Timers;
  private readonly maxFrameBytes: number;
  private readonly defaultTimeoutMs: number;
  private readonly endOnClose: boolean;
  private readonly pending = new Map<number, Pending>();
  private readonly timedOut = new Set<number>();
  private readonly listeners: { [E in keyof Events]: Events[E][] } = { protocolError: [], bye: [], close: [] };
  private nextId = 1;
  private requestHandler: RequestHandler | undefined;
  private notifyHandler: NotifyHandler | undefined;
  private hello: HelloMessage | undefined;
  private welcome: WelcomeMessage | undefined;
  private helloWaiter: Waiter<HelloMessage> | undefined;
  private welcomeWaiter: Waiter<WelcomeMessage> | undefined;
  private closedReason: string | undefined;
  /** The peer's requests whose answers are still being worked out. */
  private serving = 0;

  constructor(
    private readonly readable: Readable,
    private readonly writable: Writable,
    options: ConnectionOptions = {},
  ) {
    this.timers = options.timers ?? globalTimers;
    this.maxFrameBytes = options.maxFrameBytes ?? DEFAULT_MAX_FRAME_BYTES;
    this.defaultTimeoutMs = options.defaultRequestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS;
    this.endOnClose = options.endOnClose ?? true;
    this.decoder = new FrameDecoder(this.maxFrameBytes);
    readable.on('data', this.onData);
    readable.on('end', this.onEnd);
    readable.on('error', this.onStreamError);
    writable.on('error', this.onStreamError);
  }

  get closed(): boolean {
    return this.closedReason !== undefined;
  }

  on<E extends keyof Events>(event: E, listener: Events[E]): this {
    this.listeners[event].push(listener);
    return this;
  }

  off<E extends keyof Events>(event: E, listener: Events[E]): this {
    const list = this.listeners[event] as Events[E][];
    const at = list.indexOf(listener);
    if (at >= 0) list.splice(at, 1);
    return this;
  }

  /**
   * Kernel side of the handshake: waits for the plugin's hello, answers a matching protocol
   * with welcome, and refuses any other version (says bye, closes, rejects).
   * @throws ProtocolVersionMismatch, HandshakeTimedOut (the connection stays open), ConnectionClosed
   * @example const hello = await connection.awaitHello({ timeoutMs: 5000, capabilities: ['tools'] });
   */
  awaitHello(options: { timeoutMs?: number; capabilities?: readonly string[] } = {}): Promise<HelloMessage> {
    const timeoutMs = options.timeoutMs ?? DEFAULT_HANDSHAKE_TIMEOUT_MS;
    return this.awaitHandshake<HelloMessage>('hello', timeoutMs).then((hello) => {
      if (hello.protocol !== PROTOCOL_VERSION) {
        const error = new ProtocolVersionMismatch(PROTOCOL_VERSION, hello.protocol, `plugin '${hello.plugin}'`);
        this.close(error.message);
        throw error;
      }
      this.send({ type: 'welcome', protocol: PROTOCOL_VERSION, capabilities: [...(options.capabilities ?? [])] });
      return hello;
    });
  }

  /**
   * Plugin side of the handshake: sends hello and waits for the kernel's welcome.
   * @throws ProtocolVersionMismatch, HandshakeTimedOut, ConnectionClosed (e.g. the kernel said bye)
   */
  sayHello(options: { plugin: string; version: string; timeoutMs?: number }): Promise<WelcomeMessage> {
    const waiting = this.awaitHandshake<WelcomeMessage>('welcome', options.timeoutMs ?? DEFAULT_HANDSHAKE_TIMEOUT_MS);
    this.send({ type: 'hello', protocol: PROTOCOL_VERSION, plugin: options.plugin, version: options.version });
    return waiting.then((welcome) => {
      if (welcome.protocol !== PROTOCOL_VERSION) {
        const error = new ProtocolVersionMismatch(PROTOCOL_VERSION, welcome.protocol, 'the kernel');
        this.close(error.message);
        throw error;
      }
      return welcome;
    });
  }

  /**
   * Calls `method` on the other side; resolves with its result.
   * @throws RequestTimedOut, PluginRequestFailed (the peer answered with an error frame), ConnectionClosed, FrameTooLarge
   * @example const out = await connection.request('echo', { text: 'hi' }, { timeoutMs: 1000 });
   */
  request(method: string, params: unknown = null, options: { timeoutMs?: number } = {}): Promise<unknown> {
    if (this.closedReason !== undefined) return Promise.reject(new ConnectionClosed(this.closedReason));
    const id = this.nextId;
    this.nextId = id >= Number.MAX_SAFE_INTEGER ? 1 : id + 1;
    const timeoutMs = options.timeoutMs ?? this.defaultTimeoutMs;
    return new Promise<unknown>((resolve, reject) => {
      let frame: Buffer;
      try {
        frame = encodeFrame({ type: 'request', id, method, params }, this.maxFrameBytes);
      } catch (error) {
        reject(error as Error);
        return;
      }
      const timer = this.timers.setTimer(() => {
        if (!this.pending.delete(id)) return;
        this.rememberTimedOut(id);
        reject(new RequestTimedOut(method, id, timeoutMs));
      }, timeoutMs);
      this.pending.set(id, { method, resolve, reject, timer });
      this.write(frame);
    });
  }

  /** Sends a one-way notification. @throws ConnectionClosed, FrameTooLarge */
  notify(method: string, params: unknown = null): void {
    if (this.closedReason !== undefined) throw new ConnectionClosed(this.closedReason);
    this.send({ type: 'notify', method, params });
  }

  /** Serves the peer's requests (one handler for all methods; throw MethodNotFound for the rest). */
  onRequest(handler: RequestHandler): void {
    this.requestHandler = handler;
  }

  onNotify(handler: NotifyHandler): void {
    this.notifyHandler = handler;
  }

  /** Says bye (best effort), rejects pending requests with ConnectionClosed and stops reading. Idempotent. */
  close(reason = 'closed by this side'): void {
    if (this.closedReason !== undefined) return;
    this.send({ type: 'bye', reason });
    this.shutDown(reason);
  }

  private shutDown(reason: string): void {
    if (this.closedReason !== undefined) return;
    this.closedReason = reason;
    this.readable.off('data', this.onData);
    this.readable.off('end', this.onEnd);
    for (const [id, pending] of this.pending) {
      this.timers.clearTimer(pending.timer);
      this.pending.delete(id);
      pending.reject(new ConnectionClosed(reason));
    }
    this.helloWaiter?.fail(new ConnectionClosed(reason));
    this.welcomeWaiter?.fail(new ConnectionClosed(reason));
    if (this.endOnClose && !this.writable.writableEnded) {
      try {
        this.writable.end();
      } catch {
        // a stream that cannot be ended (a process's own stdout) is left as it is
      }
    }
    for (const listener of [...this.listeners.close]) listener(reason);
  }

  private awaitHandshake<T extends HelloMessage | WelcomeMessage>(kind: T['type'], timeoutMs: number): Promise<T> {
    const slot = kind === 'hello' ? 'helloWaiter' : 'welcomeWaiter';
    const arrived = (kind === 'hello' ? this.hello : this.welcome) as T | undefined;
    if (arrived !== undefined) return Promise.resolve(arrived);
    if (this.closedReason !== undefined) return Promise.reject(new ConnectionClosed(this.closedReason));
    if (this[slot] !== undefined) return Promise.reject(new Error(`already waiting for a ${kind}`));
    return new Promise<T>((resolve, reject) => {
      const timer = this.timers.setTimer(() => {
        this[slot] = undefined;
        reject(new HandshakeTimedOut(kind, timeoutMs));
      }, timeoutMs);
      const done = () => {
        this.timers.clearTimer(timer);
        this[slot] = undefined;
      };
      const waiter: Waiter<T> = {
        settle: (message) => {
          done();
          resolve(message);
        },
        fail: (error) => {
          done();
          reject(error);
        },
      };
      (this as unknown as Record<typeof slot, Waiter<T> | undefined>)[slot] = waiter;
    });
  }

  private readonly onData = (chunk: Buffer): void => {
    for (const frame of this.decoder.push(chunk)) {
      if (this.closedReason !== undefined) return;
      if (frame instanceof FrameTooLarge) {
        this.report(frame);
        continue;
      }
      if (frame instanceof FramingLost) {
        // Everything after stray bytes is misaligned: report once, and close so nothing waits on this peer.
        this.report(frame);
        this.close(`framing lost: ${frame.message}`);
        return;
      }
      let message: Message;
      try {
        message = parseMessage(this.decode(frame));
      } catch (error) {
        if (!(error instanceof MalformedFrame || error instanceof UnknownMessageType)) throw error;
        this.report(error);
        const replyTo = error instanceof MalformedFrame ? error.inReplyTo : undefined;
        if (replyTo !== undefined && this.pending.has(replyTo)) this.settle(replyTo, (pending) => pending.reject(error));
        if (error.id !== undefined) {
          this.send({ type: 'error', id: error.id, code: error.code, message: error.message });
        }
        continue;
      }
      this.dispatch(message);
    }
  };

  private decode(frame: Buffer): unknown {
    if (frame.length === 0) throw new MalformedFrame('the frame is empty (length 0)');
    try {
      return decodeBody(frame);
    } catch (cause) {
      throw new MalformedFrame(`the body is not valid msgpack (${describeThrown(cause)})`, undefined, { cause });
    }
  }

  private dispatch(message: Message): void {
    switch (message.type) {
      case 'hello':
        return this.onHandshake('hello', message);
      case 'welcome':
        return this.onHandshake('welcome', message);
      case 'request':
        return this.serve(message.id, message.method, message.params);
      case 'response':
        return this.settle(message.id, (pending) => pending.resolve(message.result));
      case 'error':
        return this.settle(message.id, (p) => p.reject(new PluginRequestFailed(p.method, message.code, message.message)));
      case 'notify':
        if (this.notifyHandler === undefined) return;
        try {
          this.notifyHandler(message.method, message.params);
        } catch (error) {
          this.report(new NotifyHandlerFailed(message.method, error));
        }
        return;
      case 'bye':
        for (const listener of [...this.listeners.bye]) listener(message.reason);
        return this.shutDown(`the peer said bye: ${message.reason || '(no reason)'}`);
      default: {
        const never: never = message;
        return never;
      }
    }
  }

  private onHandshake(kind: 'hello', message: HelloMessage): void;
  private onHandshake(kind: 'welcome', message: WelcomeMessage): void;
  private onHandshake(kind: 'hello' | 'welcome', message: HelloMessage | WelcomeMessage): void {
    const seen = kind === 'hello' ? this.hello : this.welcome;
    if (seen !== undefined) {
      this.report(new UnexpectedMessage(kind, `a ${kind} was already received on this connection`));
      return;
    }
    if (kind === 'hello') {
      this.hello = message as HelloMessage;
      this.helloWaiter?.settle(this.hello);
    } else {
      this.welcome = message as WelcomeMessage;
      this.welcomeWaiter?.settle(this.welcome);
    }
  }

  private settle(id: number, apply: (pending: Pending) => void): void {
    const pending = this.pending.get(id);
    if (pending === undefined) {
      this.report(new UnmatchedResponse(id, this.timedOut.has(id)));
      return;
    }
    this.pending.delete(id);
    this.timers.clearTimer(pending.timer);
    apply(pending);
  }

  private serve(id: number, method: string, params: unknown): void {
    const handler = this.requestHandler;
    if (handler === undefined) {
      this.send({ type: 'error', id, code: WIRE_ERROR_CODES.methodNotFound, message: `no handler for method '${method}'` });
      return;
    }
    // A handler that answers at once is answered at once; only a promise waits for its result.
    let result: unknown;
    try {
      result = handler(method, params);
    } catch (error) {
      this.answerWithError(id, error);
      return;
    }
    if (isThenable(result)) {
      if (++this.serving === MAX_SERVING) this.readable.pause();
      const served = (): void => {
        if (--this.serving === MAX_SERVING / 2 && this.closedReason === undefined) this.readable.resume();
      };
      Promise.resolve(result).then(
        (value) => {
          served();
          this.answer(id, method, value);
        },
        (error: unknown) => {
          served();
          this.answerWithError(id, error);
        },
      );
    } else this.answer(id, method, result);
  }

  private answer(id: number, method: string, result: unknown): void {
    if (this.closedReason !== undefined) return;
    try {
      this.write(encodeFrame({ type: 'response', id, result }, this.maxFrameBytes));
    } catch (error) {
      const code = WIRE_ERROR_CODES.resultNotEncodable;
      this.send({ type: 'error', id, code, message: `the result of '${method}' cannot be sent: ${describeThrown(error)}` });
    }
  }

  private answerWithError(id: number, error: unknown): void {
    if (this.closedReason !== undefined) return;
    const code = (error as { code?: unknown } | null)?.code;
    this.send({
      type: 'error',
      id,
      code: typeof code === 'string' && code.length > 0 ? code.slice(0, 200) : WIRE_ERROR_CODES.handlerFailed,
      message: describeThrown(error).slice(0, MAX_ERROR_MESSAGE_CHARS),
    });
  }

  private send(message: Message): void {
    this.write(encodeFrame(message, this.maxFrameBytes));
  }

  private write(frame: Buffer): void {
    if (this.writable.writableEnded || this.writable.destroyed) return;
    // Each frame leaves at once: gathering a tick's frames into one writev saves syscalls but makes
    // the two ends take turns instead of working at the same time (plugin.transport bench: 0.66x).
    this.writable.write(frame);
    const unread = this.writable.writableLength;
    if (unread > MAX_UNREAD_BYTES && this.closedReason === undefined) {
      const error = new AnswersUnread(unread, MAX_UNREAD_BYTES);
      this.report(error);
      // No bye: the peer reads nothing, and the bye would only join what it left unread.
      this.shutDown(error.message);
    }
  }

  private report(error: PluginProtocolError): void {
    for (const listener of [...this.listeners.protocolError]) listener(error);
  }

  private rememberTimedOut(id: number): void {
    this.timedOut.add(id);
    if (this.timedOut.size > LATE_IDS_REMEMBERED) {
      const oldest = this.timedOut.values().next().value;
      if (oldest !== undefined) this.timedOut.delete(oldest);
    }
  }

  private readonly onEnd = (): void => this.shutDown('the peer closed its end of the stream');

  private readonly onStreamError = (error: Error): void => this.shutDown(`stream failed: ${error.message}`);
}
