import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { decodeBody, encodeFrame, FrameDecoder, FramingLost, FrameTooLarge, frameBody } from '../../plugins/protocol/index.ts';

const bodies = (frames: ReturnType<FrameDecoder['push']>) =>
  frames.map((f) => (f instanceof FrameTooLarge || f instanceof FramingLost ? f : decodeBody(f)));

describe('frames: 4-byte big-endian length + msgpack body', () => {
  it('encodes the header as the body length', () => {
    const frame = encodeFrame({ type: 'bye', reason: 'x' });
    expect(frame.readUInt32BE(0)).toBe(frame.length - 4);
    expect(decodeBody(frame.subarray(4))).toEqual({ type: 'bye', reason: 'x' });
  });

  it('sends undefined as nil and uses no msgpackr-only records', () => {
    const frame = encodeFrame({ a: undefined });
    // fixmap(1) 'a' nil: plain msgpack any library reads
    expect(frame.subarray(4).toString('hex')).toBe('81a161c0');
  });

  it('reassembles a frame split at every byte', () => {
    const frame = encodeFrame({ type: 'notify', method: 'tick', params: [1, 'two', { three: 3 }] });
    const decoder = new FrameDecoder();
    const out = [];
    for (let i = 0; i < frame.length; i++) out.push(...decoder.push(frame.subarray(i, i + 1)));
    expect(bodies(out)).toEqual([{ type: 'notify', method: 'tick', params: [1, 'two', { three: 3 }] }]);
    expect(decoder.pendingBytes).toBe(0);
  });

  it('yields every frame of a coalesced chunk, and keeps the partial tail', () => {
    const all = Buffer.concat([encodeFrame(1), encodeFrame('two'), encodeFrame([3])]);
    const decoder = new FrameDecoder();
    expect(bodies(decoder.push(all.subarray(0, all.length - 2)))).toEqual([1, 'two']);
    expect(bodies(decoder.push(all.subarray(all.length - 2)))).toEqual([[3]]);
  });

  it('yields the same frames, in order, however the stream is cut into chunks', () => {
    const value = fc.oneof(fc.string(), fc.integer(), fc.dictionary(fc.string({ maxLength: 4 }), fc.string(), { maxKeys: 3 }));
    fc.assert(
      fc.property(fc.array(value, { maxLength: 12 }), fc.array(fc.nat(), { maxLength: 8 }), (values, cuts) => {
        const stream = Buffer.concat(values.map((v) => encodeFrame(v)));
        const points = [...new Set(cuts.map((c) => c % (stream.length + 1)))].sort((a, b) => a - b);
        const decoder = new FrameDecoder();
        const out = [];
        let from = 0;
        for (const to of [...points, stream.length]) {
          out.push(...decoder.push(stream.subarray(from, to)));
          from = to;
        }
        expect(bodies(out)).toEqual(values);
        expect(decoder.pendingBytes).toBe(0);
      }),
      { numRuns: 500 },
    );
  });

  it('yields a zero-length frame as an empty body', () => {
    const decoder = new FrameDecoder();
    const out = decoder.push(Buffer.concat([frameBody(Buffer.alloc(0)), encodeFrame('after')]));
    expect(out).toHaveLength(2);
    expect((out[0] as Buffer).length).toBe(0);
    expect(decodeBody(out[1] as Buffer)).toBe('after');
  });

  it('refuses an oversized frame with FrameTooLarge, skips its bytes and carries on', () => {
    const decoder = new FrameDecoder(8);
    const big = frameBody(Buffer.concat([Buffer.from([0x81]), Buffer.alloc(19, 7)])); // starts as a map: a real, too large message
    const out = [
      ...decoder.push(Buffer.concat([encodeFrame('a'), big.subarray(0, 10)])),
      ...decoder.push(Buffer.concat([big.subarray(10), encodeFrame('b')])),
    ];
    expect(out).toHaveLength(3);
    expect(decodeBody(out[0] as Buffer)).toBe('a');
    expect(out[1]).toBeInstanceOf(FrameTooLarge);
    expect(out[1]).toMatchObject({ code: 'FRAME_TOO_LARGE', size: 20, maxFrameBytes: 8 });
    expect(decodeBody(out[2] as Buffer)).toBe('b');
  });

  it('reports an oversized frame on its header and first body byte, before the rest of its body arrives', () => {
    const header = Buffer.alloc(4);
    header.writeUInt32BE(17 * 1024 * 1024);
    const decoder = new FrameDecoder();
    expect(decoder.push(header)).toEqual([]);
    const out = decoder.push(Buffer.from([0xde]));
    expect(out).toHaveLength(1);
    expect(out[0]).toBeInstanceOf(FrameTooLarge);
  });

  it('shows a whole line as it is, and nothing of one cut short: what a plugin printed stays text the scrub can read', () => {
    const line = new FrameDecoder().push(Buffer.from('DEBUG: key is sk-live-4455xy\n'));
    expect(line).toMatchObject([{ code: 'FRAMING_LOST', preview: '"DEBUG: key is sk-live-4455xy\\n"' }]);
    // Cut by the preview's length, then followed by bytes that are not text: none of it, not even words before the cut (a passphrase has spaces).
    const long = new FrameDecoder().push(Buffer.concat([Buffer.from(`DEBUG: correct horse battery ${'k'.repeat(60)}`), encodeFrame('x')]));
    expect(long).toMatchObject([{ code: 'FRAMING_LOST', preview: '52 bytes of a line not read to its end (not shown)' }]);
    expect((long[0] as FramingLost).message).not.toContain('horse');
    const multibyte = new FrameDecoder().push(Buffer.concat([Buffer.from('DEBUG: 密码 '), Buffer.from([0x00, 0xff]), Buffer.from('\n')]));
    expect((multibyte[0] as FramingLost).preview).toBe(JSON.stringify('DEBUG: 密码 \u0000\ufffd\n'));
  });

  it('reports text on the stream as framing lost, once, with the text, and reads nothing after it', () => {
    const decoder = new FrameDecoder();
    const out = [...decoder.push(Buffer.concat([encodeFrame('before'), Buffer.from('debug: x=1')])), ...decoder.push(Buffer.from('\n'))];
    expect(bodies(out.slice(0, 1))).toEqual(['before']);
    expect(out[1]).toBeInstanceOf(FramingLost);
    // The line had not ended when the bytes were read: it may go on, so none of it is shown.
    expect(out[1]).toMatchObject({
      code: 'FRAMING_LOST',
      preview: '10 bytes of a line not read to its end (not shown)',
      announced: 0x64656275,
    });
    expect((out[1] as FramingLost).message).toContain('print diagnostics to stderr');
    expect(out).toHaveLength(2);
    expect(decoder.push(encodeFrame('after'))).toEqual([]);
    expect(decoder.pendingBytes).toBe(0);
  });

  it('reports text split across reads, and a short line that only the next frame completes', () => {
    const split = new FrameDecoder();
    expect(split.push(Buffer.from('he'))).toEqual([]);
    expect(split.push(Buffer.from('llo\n'))[0]).toMatchObject({ code: 'FRAMING_LOST', preview: '"hello\\n"' });
    const short = new FrameDecoder();
    expect(short.push(Buffer.from('ok\n'))).toEqual([]);
    expect(short.push(encodeFrame({ type: 'bye' }))[0]).toMatchObject({ code: 'FRAMING_LOST' });
  });

  it('refuses to encode a frame over the limit', () => {
    expect(() => encodeFrame('x'.repeat(100), 16)).toThrow(FrameTooLarge);
  });

  it('handles a large frame in many chunks', () => {
    const payload = Buffer.alloc(2 * 1024 * 1024, 1);
    const frame = encodeFrame(payload);
    const decoder = new FrameDecoder();
    const out = [];
    for (let at = 0; at < frame.length; at += 65_536) out.push(...decoder.push(frame.subarray(at, at + 65_536)));
    expect(out).toHaveLength(1);
    expect(Buffer.compare(decodeBody(out[0] as Buffer) as Buffer, payload)).toBe(0);
  });
});
