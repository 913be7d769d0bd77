import { describe, expect, it } from 'vitest';
import { MalformedFrame, parseMessage, UnknownMessageType, type Message } from '../../plugins/protocol/index.ts';

const refusal = (value: unknown): unknown => {
  try {
    parseMessage(value);
  } catch (error) {
    return error;
  }
  throw new Error(`accepted ${JSON.stringify(value)}`);
};

describe('message validation', () => {
  const valid: Message[] = [
    { type: 'hello', protocol: 1, plugin: 'echo', version: '0.1.0' },
    { type: 'welcome', protocol: 1, capabilities: ['tools'] },
    { type: 'request', id: 1, method: 'echo', params: { text: 'hi' } },
    { type: 'response', id: 1, result: [1, 2] },
    { type: 'error', id: 1, code: 'HANDLER_FAILED', message: 'boom' },
    { type: 'notify', method: 'tick', params: 3 },
    { type: 'bye', reason: 'done' },
  ];
  it.each(valid)('accepts a well-formed $type', (message) => {
    expect(parseMessage(message)).toEqual(message);
  });

  it('drops unknown fields and reads absent params/result as nil', () => {
    expect(parseMessage({ type: 'request', id: 2, method: 'm', extra: true })).toEqual({
      type: 'request',
      id: 2,
      method: 'm',
      params: null,
    });
    expect(parseMessage({ type: 'response', id: 2 })).toEqual({ type: 'response', id: 2, result: null });
    expect(parseMessage({ type: 'bye' })).toEqual({ type: 'bye', reason: '' });
  });

  it.each([
    ['a string', 'hello'],
    ['nil', null],
    ['an array', [1, 2]],
    ['a map without type', { id: 1 }],
    ['a numeric type', { type: 3 }],
    ['hello without plugin', { type: 'hello', protocol: 1, version: '1' }],
    ['hello with a string protocol', { type: 'hello', protocol: '1', plugin: 'p', version: '1' }],
    ['welcome with non-string capabilities', { type: 'welcome', protocol: 1, capabilities: [1] }],
    ['request with a negative id', { type: 'request', id: -1, method: 'm' }],
    ['request with a fractional id', { type: 'request', id: 1.5, method: 'm' }],
    ['request with an empty method', { type: 'request', id: 1, method: '' }],
    ['error without code', { type: 'error', id: 1, message: 'x' }],
    ['notify without method', { type: 'notify', params: 1 }],
  ])('refuses %s as MalformedFrame', (_what, value) => {
    const error = refusal(value);
    expect(error).toBeInstanceOf(MalformedFrame);
    expect(error).toMatchObject({ code: 'MALFORMED_FRAME' });
  });

  it('keeps the id of a malformed request, so it can be answered', () => {
    expect(refusal({ type: 'request', id: 9, method: 42 })).toMatchObject({ id: 9, inReplyTo: undefined });
  });

  it('marks a malformed answer with the request it answers, never as one to answer', () => {
    expect(refusal({ type: 'error', id: 4, code: 5, message: 'x' })).toMatchObject({ id: undefined, inReplyTo: 4 });
  });

  it('refuses an unknown type with UnknownMessageType, keeping its id', () => {
    const error = refusal({ type: 'subscribe', id: 3 });
    expect(error).toBeInstanceOf(UnknownMessageType);
    expect(error).toMatchObject({ code: 'UNKNOWN_MESSAGE_TYPE', messageType: 'subscribe', id: 3 });
  });
});

describe('interop: bytes another msgpack library would write', () => {
  it('reads a request built by hand with map16, str8 and uint32 encodings', async () => {
    const { FrameDecoder, decodeBody } = await import('../../plugins/protocol/index.ts');
    const str8 = (s: string) => Buffer.concat([Buffer.from([0xd9, s.length]), Buffer.from(s)]);
    const body = Buffer.concat([
      Buffer.from([0xde, 0x00, 0x04]), // map16 with 4 entries
      str8('type'),
      str8('request'),
      str8('id'),
      Buffer.from([0xce, 0x00, 0x01, 0x00, 0x00]), // uint32 65536
      str8('method'),
      str8('echo'),
      str8('params'),
      Buffer.from([0x92, 0xc3, 0xcb, 0x3f, 0xf8, 0, 0, 0, 0, 0, 0]), // [true, 1.5 as float64]
    ]);
    const header = Buffer.alloc(4);
    header.writeUInt32BE(body.length);
    const [frame] = new FrameDecoder().push(Buffer.concat([header, body]));
    expect(parseMessage(decodeBody(frame as Buffer))).toEqual({ type: 'request', id: 65536, method: 'echo', params: [true, 1.5] });
  });
});
