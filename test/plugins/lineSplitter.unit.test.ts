/**
 * The bounded line splitter (the cli socket's, a plugin's stderr): lines come out whole however
 * the bytes are chunked, and a line longer than the limit ends the stream as soon as it passes
 * the limit (`end`) or is cut there, the lines after it read on (`cut`); it holds at most the limit.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { formatBytes } from '../../plugins/builtin/cli/cliWire.ts';
import { LineSplitter } from '../../plugins/protocol/lineSplitter.ts';

const bytes = (text: string) => Buffer.from(text, 'utf8');

/** Feeds `chunks` in order; every line, whether a chunk was refused, and the most it held at once. */
const feed = (splitter: LineSplitter, chunks: readonly Buffer[]) => {
  const lines: string[] = [];
  let tooLong = false;
  let mostHeld = 0;
  for (const chunk of chunks) {
    const result = splitter.push(chunk);
    lines.push(...result.lines);
    tooLong ||= result.tooLong;
    mostHeld = Math.max(mostHeld, splitter.pendingBytes);
  }
  return { lines, tooLong, mostHeld };
};

/** `whole` cut at the given offsets. */
const cut = (whole: Buffer, offsets: readonly number[]): Buffer[] => {
  const points = [...new Set(offsets.map((o) => o % (whole.length + 1)))].sort((a, b) => a - b);
  const chunks: Buffer[] = [];
  let start = 0;
  for (const point of points) {
    chunks.push(whole.subarray(start, point));
    start = point;
  }
  chunks.push(whole.subarray(start));
  return chunks;
};

describe('LineSplitter', () => {
  it('gives complete lines without their newline or carriage return, and keeps the unfinished one', () => {
    const splitter = new LineSplitter(100);
    expect(splitter.push(bytes('{"a":1}\n{"b"'))).toEqual({ lines: ['{"a":1}'], tooLong: false, cut: [] });
    expect(splitter.pendingBytes).toBe(4);
    expect(splitter.push(bytes(':2}\r\n\n'))).toEqual({ lines: ['{"b":2}', ''], tooLong: false, cut: [] });
    expect(splitter.pendingBytes).toBe(0);
  });

  it('joins a character whose bytes arrive in different chunks', () => {
    const splitter = new LineSplitter(100);
    const line = bytes('北京😀\n');
    const { lines } = feed(splitter, [line.subarray(0, 1), line.subarray(1, 5), line.subarray(5)]);
    expect(lines).toEqual(['北京😀']);
  });

  it('takes a line of exactly the limit and refuses one byte more', () => {
    expect(new LineSplitter(8).push(bytes('12345678\n'))).toEqual({ lines: ['12345678'], tooLong: false, cut: [] });
    expect(new LineSplitter(8).push(bytes('ok\n123456789\nlater\n'))).toEqual({ lines: ['ok'], tooLong: true, cut: [] });
  });

  it('refuses a long line the moment it passes the limit, before its newline arrives, and takes nothing after', () => {
    const splitter = new LineSplitter(8);
    expect(splitter.push(bytes('1234'))).toEqual({ lines: [], tooLong: false, cut: [] });
    expect(splitter.push(bytes('56789'))).toEqual({ lines: [], tooLong: true, cut: [] });
    expect(splitter.pendingBytes).toBe(0);
    expect(splitter.push(bytes('\nfine\n'))).toEqual({ lines: [], tooLong: true, cut: [] });
  });

  it('holds at most the limit of a 64 MiB line sent in 64 KiB chunks', () => {
    const limit = 1024 * 1024;
    const splitter = new LineSplitter(limit);
    const chunk = Buffer.alloc(64 * 1024, 'y');
    let refusedAfter = 0;
    let mostHeld = 0;
    for (let sent = 0; sent < 64 * 1024 * 1024; sent += chunk.length) {
      const { tooLong } = splitter.push(chunk);
      mostHeld = Math.max(mostHeld, splitter.pendingBytes);
      if (tooLong && refusedAfter === 0) refusedAfter = sent + chunk.length;
    }
    expect(refusedAfter, 'bytes taken before the refusal').toBe(limit + chunk.length);
    expect(mostHeld).toBeLessThanOrEqual(limit);
  });

  it('gives the same lines however the stream is chunked, never holding more than the limit', () => {
    const limit = 64;
    const line = fc.string({ unit: 'grapheme', maxLength: 90, size: 'max' }).filter((s) => !s.includes('\n') && !s.endsWith('\r'));
    fc.assert(
      fc.property(fc.array(line, { maxLength: 12 }), fc.array(fc.nat(), { maxLength: 10 }), (lines, offsets) => {
        const whole = bytes(lines.map((l) => `${l}\n`).join(''));
        const { lines: out, tooLong, mostHeld } = feed(new LineSplitter(limit), cut(whole, offsets));
        const fits = lines.findIndex((l) => Buffer.byteLength(l) > limit);
        expect(out).toEqual(fits === -1 ? lines : lines.slice(0, fits));
        expect(tooLong).toBe(fits !== -1);
        expect(mostHeld).toBeLessThanOrEqual(limit);
      }),
    );
  });
});

describe('LineSplitter, cutting', () => {
  it('cuts a line at the limit, drops its rest up to its newline, and reads on, the last line given at the end', () => {
    const splitter = new LineSplitter(8, 'cut');
    expect(splitter.push(bytes('ok\n1234567'))).toEqual({ lines: ['ok'], tooLong: false, cut: [] });
    expect(splitter.push(bytes('89abc'))).toEqual({ lines: ['12345678'], tooLong: false, cut: [0] });
    expect(splitter.pendingBytes).toBe(0);
    expect(splitter.push(bytes('def\nnext\nlast'))).toEqual({ lines: ['next'], tooLong: false, cut: [] });
    expect(splitter.end()).toBe('last');
    expect(splitter.end()).toBeUndefined();
  });

  it('gives every line however the stream is chunked: whole up to the limit, else its first bytes; never holding more', () => {
    const limit = 16;
    const line = fc.string({ unit: 'binary-ascii', maxLength: 40, size: 'max' }).filter((s) => !s.includes('\n') && !s.includes('\r'));
    fc.assert(
      fc.property(fc.array(line, { maxLength: 12 }), fc.array(fc.nat(), { maxLength: 10 }), (lines, offsets) => {
        const splitter = new LineSplitter(limit, 'cut');
        const out: string[] = [];
        const cutLines: number[] = [];
        let mostHeld = 0;
        for (const chunk of cut(bytes(lines.map((l) => `${l}\n`).join('')), offsets)) {
          const result = splitter.push(chunk);
          cutLines.push(...result.cut.map((i) => out.length + i));
          out.push(...result.lines);
          expect(result.tooLong).toBe(false);
          mostHeld = Math.max(mostHeld, splitter.pendingBytes);
        }
        expect(out).toEqual(lines.map((l) => l.slice(0, limit)));
        expect(cutLines).toEqual(lines.flatMap((l, i) => (l.length > limit ? [i] : [])));
        expect(mostHeld).toBeLessThanOrEqual(limit);
        expect(splitter.end()).toBeUndefined();
      }),
    );
  });
});

describe('formatBytes', () => {
  it('says a size as a person reads it', () => {
    expect(formatBytes(300)).toBe('300 bytes');
    expect(formatBytes(256 * 1024)).toBe('256 KiB');
    expect(formatBytes(1024 * 1024)).toBe('1 MiB');
    expect(formatBytes(10_000_000)).toBe('9.5 MiB');
    // Just over a limit of 1 MiB: not '1.0 MiB', which reads as the limit itself.
    expect(formatBytes(1_090_000)).toBe('1.04 MiB');
  });
});
