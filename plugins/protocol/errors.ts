/**
 * Typed errors of the plugin wire protocol. Each has a stable `code`; the ones a connection
 * reports about bytes the peer sent (and then carries on) extend `PluginProtocolError`.
 */
import { HologramError } from '../../events/errors.ts';

/** Something the peer sent that breaks the protocol. Reported through `on('protocolError')`, never thrown at the peer. */
export abstract class PluginProtocolError extends HologramError {}

/**
 * The peer left more of our frames unread than a connection holds for it (it sends requests and
 * never reads the answers): they would pile up in memory without end, so the connection closes.
 */
export class AnswersUnread extends PluginProtocolError {
  readonly code = 'ANSWERS_UNREAD';
  constructor(
    readonly unreadBytes: number,
    readonly maxUnreadBytes: number,
  ) {
    super(
      `the peer left ${unreadBytes} bytes of frames unread, over the ${maxUnreadBytes} a connection holds for it; ` +
        'a plugin must keep reading its stdin',
    );
  }
}

/** A frame header announced a body over the size limit; its bytes are skipped. */
export class FrameTooLarge extends PluginProtocolError {
  readonly code = 'FRAME_TOO_LARGE';
  constructor(
    readonly size: number,
    readonly maxFrameBytes: number,
  ) {
    super(
      `a frame of ${size} bytes exceeds the limit of ${maxFrameBytes} bytes; ` +
        `send large payloads in pieces (or raise maxFrameBytes on both sides)`,
    );
  }
}

/**
 * The peer wrote bytes that are not frames (typically text printed to stdout): a header
 * announcing a body over the limit that does not start as a message (a msgpack map) does.
 * Framing cannot be recovered from this; the connection closes.
 */
export class FramingLost extends PluginProtocolError {
  readonly code = 'FRAMING_LOST';
  constructor(
    /** The first bytes that broke the framing, as text where they are printable. */
    readonly preview: string,
    readonly announced: number,
  ) {
    super(
      `the peer wrote bytes that are not a frame: ${preview} (read as a header announcing ${announced} bytes); ` +
        `a plugin must write only frames to stdout — print diagnostics to stderr`,
    );
  }
}

/** A frame body is not valid msgpack, or not the shape of any protocol message. */
export class MalformedFrame extends PluginProtocolError {
  readonly code = 'MALFORMED_FRAME';
  constructor(
    readonly reason: string,
    /** The request id the frame carried, when one could be read: the connection answers it with an `error` frame. */
    readonly id?: number,
    options?: { cause?: unknown; inReplyTo?: number },
  ) {
    super(`malformed frame: ${reason}; see plugins/PROTOCOL.md for the message shapes`, options);
    this.inReplyTo = options?.inReplyTo;
  }
  /** The id of a malformed response or error frame: the request of ours it meant to answer (which then fails). */
  readonly inReplyTo: number | undefined;
}

/** A well-formed message whose `type` this protocol version does not define. */
export class UnknownMessageType extends PluginProtocolError {
  readonly code = 'UNKNOWN_MESSAGE_TYPE';
  constructor(
    readonly messageType: string,
    readonly id?: number,
  ) {
    super(`unknown message type '${messageType}'; protocol 1 knows hello, welcome, request, response, error, notify and bye`);
  }
}

/** A valid message at the wrong moment (a second hello, a welcome nobody waits for). */
export class UnexpectedMessage extends PluginProtocolError {
  readonly code = 'UNEXPECTED_MESSAGE';
  constructor(
    readonly messageType: string,
    readonly why: string,
  ) {
    super(`unexpected '${messageType}' message: ${why}`);
  }
}

/** A response or error for an id with no pending request: late (after its timeout) or never asked. */
export class UnmatchedResponse extends PluginProtocolError {
  readonly code = 'UNMATCHED_RESPONSE';
  constructor(
    readonly id: number,
    /** True when the id belonged to a request that had already timed out. */
    readonly late: boolean,
  ) {
    super(
      late
        ? `a response for request ${id} arrived after the request timed out; it was dropped`
        : `a response for request ${id} matches no request sent on this connection; it was dropped`,
    );
  }
}

/** A notify handler threw; the notification is lost, the connection carries on. */
export class NotifyHandlerFailed extends PluginProtocolError {
  readonly code = 'NOTIFY_HANDLER_FAILED';
  constructor(
    readonly method: string,
    cause: unknown,
  ) {
    super(`the handler for notification '${method}' threw: ${describeThrown(cause)}`, { cause });
  }
}

/** The two sides speak different protocol versions; the kernel refuses the plugin. */
export class ProtocolVersionMismatch extends HologramError {
  readonly code = 'PROTOCOL_VERSION_MISMATCH';
  constructor(
    readonly ours: number,
    readonly theirs: number,
    readonly peer: string,
  ) {
    super(
      `${peer} speaks plugin protocol ${theirs}, but this side speaks protocol ${ours}; ` +
        `rebuild the plugin against protocol ${ours} (or run a kernel that speaks ${theirs})`,
    );
  }
}

/** No hello (or welcome) arrived in time. */
export class HandshakeTimedOut extends HologramError {
  readonly code = 'HANDSHAKE_TIMED_OUT';
  constructor(
    readonly awaited: 'hello' | 'welcome',
    readonly timeoutMs: number,
  ) {
    super(
      `no '${awaited}' frame within ${timeoutMs} ms; the peer must send it first thing ` +
        `(check that it writes frames to stdout and nothing else)`,
    );
  }
}

/** A request got no answer within its timeout. */
export class RequestTimedOut extends HologramError {
  readonly code = 'REQUEST_TIMED_OUT';
  constructor(
    readonly method: string,
    readonly id: number,
    readonly timeoutMs: number,
  ) {
    super(`request ${id} ('${method}') got no answer within ${timeoutMs} ms; a late answer will be dropped`);
  }
}

/** The peer answered a request with an `error` frame. */
export class PluginRequestFailed extends HologramError {
  readonly code = 'PLUGIN_REQUEST_FAILED';
  constructor(
    readonly method: string,
    /** The code the peer put in its error frame (e.g. METHOD_NOT_FOUND, HANDLER_FAILED). */
    readonly remoteCode: string,
    readonly remoteMessage: string,
  ) {
    super(`request '${method}' failed on the other side: [${remoteCode}] ${remoteMessage}`);
  }
}

/** The connection is closed: by `close()`, by a `bye`, or because a stream ended or failed. */
export class ConnectionClosed extends HologramError {
  readonly code = 'CONNECTION_CLOSED';
  constructor(readonly reason: string) {
    super(`the plugin connection is closed (${reason})`);
  }
}

/** Thrown by a request handler for a method it does not serve; becomes a METHOD_NOT_FOUND error frame. */
export class MethodNotFound extends HologramError {
  readonly code = 'METHOD_NOT_FOUND';
  constructor(readonly method: string) {
    super(`no handler for method '${method}'`);
  }
}

export const describeThrown = (error: unknown): string =>
  error instanceof Error ? error.message : typeof error === 'string' ? error : (JSON.stringify(error) ?? String(error));
