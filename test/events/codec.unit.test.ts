/** The payload codec: a large value packed does not leave msgpackr's shared buffer at its size. */
import { Packr } from 'msgpackr';
import { describe, expect, it } from 'vitest';
import { decodePayload, encodePayload, packWith } from '../../events/codec.ts';

/** The size of the buffer msgpackr packs into now (what a small value's bytes are a view of). */
const packBufferBytes = (): number => encodePayload(1).buffer.byteLength;

describe('packWith', () => {
  it('hands the packers a small buffer again after a large value, and the large bytes stay whole', () => {
    const large = { text: 'x'.repeat(4 << 20), list: Array.from({ length: 1_000 }, (_, i) => i) };
    const bytes = packWith(new Packr({ moreTypes: true }), large);
    expect(bytes.length).toBeGreaterThan(4 << 20);
    // Without the reset the shared buffer stays several times the value's size for the rest of the process.
    expect(packBufferBytes()).toBeLessThan(256 * 1024);
    for (let i = 0; i < 1_000; i++) encodePayload({ i, text: 'y'.repeat(200) });
    expect(decodePayload(bytes)).toEqual(large);
  });

  it('leaves the shared buffer as msgpackr grew it after a value under the limit', () => {
    encodePayload({ text: 'z'.repeat(100_000) });
    expect(packBufferBytes()).toBeGreaterThan(100_000);
  });
});
