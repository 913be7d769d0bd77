/**
 * The messages of plugin protocol 1, and the one function that turns a decoded frame body
 * into a message or a typed protocol error. Unknown fields are ignored (room to grow);
 * unknown message types are refused.
 */
import { MalformedFrame, UnknownMessageType } from './errors.ts';

/** The protocol version this build speaks. The kernel refuses a plugin that says another. */
export const PROTOCOL_VERSION = 1;

/** Plugin → kernel, the first frame a plugin sends. */
export type HelloMessage = Readonly<{ type: 'hello'; protocol: number; plugin: string; version: string }>;
/** Kernel → plugin, the answer to an accepted hello. */
export type WelcomeMessage = Readonly<{ type: 'welcome'; protocol: number; capabilities: readonly string[] }>;
/** Either way: call `method`; the other side answers with a response or an error carrying the same id. */
export type RequestMessage = Readonly<{ type: 'request'; id: number; method: string; params: unknown }>;
export type ResponseMessage = Readonly<{ type: 'response'; id: number; result: unknown }>;
export type ErrorMessage = Readonly<{ type: 'error'; id: number; code: string; message: string }>;
/** Either way, one-way: no answer. */
export type NotifyMessage = Readonly<{ type: 'notify'; method: string; params: unknown }>;
/** Either way: the sender is closing the connection. */
export type ByeMessage = Readonly<{ type: 'bye'; reason: string }>;

export type Message = HelloMessage | WelcomeMessage | RequestMessage | ResponseMessage | ErrorMessage | NotifyMessage | ByeMessage;

export type MessageType = Message['type'];

export const MESSAGE_TYPES: readonly MessageType[] = ['hello', 'welcome', 'request', 'response', 'error', 'notify', 'bye'];

/** Error codes this implementation puts in `error` frames itself (handlers may send their own). */
export const WIRE_ERROR_CODES = {
  methodNotFound: 'METHOD_NOT_FOUND',
  handlerFailed: 'HANDLER_FAILED',
  resultNotEncodable: 'RESULT_NOT_ENCODABLE',
  malformedFrame: 'MALFORMED_FRAME',
  unknownMessageType: 'UNKNOWN_MESSAGE_TYPE',
} as const;

type Fields = Record<string, unknown>;

const isId = (value: unknown): value is number => typeof value === 'number' && Number.isSafeInteger(value) && value >= 0;

const kind = (value: unknown): string =>
  value === null ? 'nil' : Array.isArray(value) ? 'array' : Buffer.isBuffer(value) ? 'binary' : typeof value;

const isString = (v: unknown): boolean => typeof v === 'string';
const isMethod = (v: unknown): boolean => typeof v === 'string' && v.length > 0;
const isStringArray = (v: unknown): boolean => Array.isArray(v) && v.every(isString);

/** The message's `field` passes `test`, or the frame is malformed. (Module-level so a hot call makes no closures.) */
const need = (
  m: Fields,
  id: number | undefined,
  inReplyTo: number | undefined,
  field: string,
  test: (v: unknown) => boolean,
  what: string,
): void => {
  if (!test(m[field])) {
    const reason = `'${String(m.type)}' needs '${field}' as ${what}, got ${kind(m[field])}`;
    throw new MalformedFrame(reason, id, { inReplyTo });
  }
};

/**
 * Checks a decoded frame body and returns the message it is (only its known fields).
 * @throws MalformedFrame or UnknownMessageType, carrying the frame's request id when it had a readable one.
 * @example parseMessage(decodeBody(body)) // { type: 'request', id: 1, method: 'echo', params: 'hi' }
 */
export const parseMessage = (value: unknown): Message => {
  if (typeof value !== 'object' || value === null || Array.isArray(value) || Buffer.isBuffer(value)) {
    throw new MalformedFrame(`the body is ${kind(value)}, not a map with a 'type' field`);
  }
  const m = value as Fields;
  // A frame's id names the peer's request when it asks, and one of ours when it answers.
  const answers = m.type === 'response' || m.type === 'error';
  const id = isId(m.id) && !answers ? m.id : undefined;
  const inReplyTo = isId(m.id) && answers ? m.id : undefined;
  switch (m.type) {
    case 'hello':
      need(m, id, inReplyTo, 'protocol', isId, 'a non-negative integer');
      need(m, id, inReplyTo, 'plugin', isMethod, 'a non-empty string');
      need(m, id, inReplyTo, 'version', isString, 'a string');
      return { type: 'hello', protocol: m.protocol as number, plugin: m.plugin as string, version: m.version as string };
    case 'welcome':
      need(m, id, inReplyTo, 'protocol', isId, 'a non-negative integer');
      need(m, id, inReplyTo, 'capabilities', isStringArray, 'an array of strings');
      return { type: 'welcome', protocol: m.protocol as number, capabilities: m.capabilities as string[] };
    case 'request':
      need(m, id, inReplyTo, 'id', isId, 'a non-negative integer');
      need(m, id, inReplyTo, 'method', isMethod, 'a non-empty string');
      return { type: 'request', id: m.id as number, method: m.method as string, params: m.params ?? null };
    case 'response':
      need(m, id, inReplyTo, 'id', isId, 'a non-negative integer');
      return { type: 'response', id: m.id as number, result: m.result ?? null };
    case 'error':
      need(m, id, inReplyTo, 'id', isId, 'a non-negative integer');
      need(m, id, inReplyTo, 'code', isMethod, 'a non-empty string');
      need(m, id, inReplyTo, 'message', isString, 'a string');
      return { type: 'error', id: m.id as number, code: m.code as string, message: m.message as string };
    case 'notify':
      need(m, id, inReplyTo, 'method', isMethod, 'a non-empty string');
      return { type: 'notify', method: m.method as string, params: m.params ?? null };
    case 'bye':
      return { type: 'bye', reason: typeof m.reason === 'string' ? m.reason : '' };
    default:
      if (typeof m.type !== 'string') throw new MalformedFrame(`'type' should be a string, got ${kind(m.type)}`, id);
      throw new UnknownMessageType(m.type, id);
  }
};
