/**
 * Length-delimited frames: a 4-byte big-endian body length, then the body. The decoder yields
 * bodies in order whatever the chunking, and skips (and reports) a body over the limit
 * without buffering it, so one oversized frame does not end the stream. A header over the
 * limit whose body does not start as a message (a msgpack map) is not a frame but stray bytes
 * (text on stdout): the decoder reports the framing lost once and reads nothing more.
 */
import { encodeBodyAfter } from './codec.ts';
import { FramingLost, FrameTooLarge } from './errors.ts';

export const FRAME_HEADER_BYTES = 4;
export const DEFAULT_MAX_FRAME_BYTES = 16 * 1024 * 1024;

const EMPTY = Buffer.alloc(0);

/** What `FrameDecoder.push` yields: a frame body, the report of a frame it skipped, or (last) of framing lost. */
export type DecodedFrame = Buffer | FrameTooLarge | FramingLost;

/** The first byte of every message body: a msgpack map (fixmap, map16, map32). */
const startsAMap = (byte: number): boolean => (byte >= 0x80 && byte <= 0x8f) || byte === 0xde || byte === 0xdf;

const PREVIEW_BYTES = 48;

/**
 * What a plugin printed, as a person reads it: a whole line, as UTF-8 text, quoted and escaped
 * where not printable (never hex: it stays text, so the scrub finds a secret value in it as in
 * any text). Cut short it is not shown, only its length: a cut could fall inside a value, and no
 * scrub knows a part of one.
 */
const previewOf = (bytes: Buffer, whole: boolean): string =>
  whole ? JSON.stringify(bytes.toString('utf8')) : `${bytes.length} bytes of a line not read to its end (not shown)`;

/**
 * Encodes one value as a frame (header + msgpack body).
 * @throws FrameTooLarge when the body would exceed `maxFrameBytes`.
 * @example socket.write(encodeFrame({ type: 'notify', method: 'tick', params: null }))
 */
export const encodeFrame = (value: unknown, maxFrameBytes = DEFAULT_MAX_FRAME_BYTES): Buffer => {
  const frame = encodeBodyAfter(FRAME_HEADER_BYTES, value);
  const length = frame.length - FRAME_HEADER_BYTES;
  if (length > maxFrameBytes) throw new FrameTooLarge(length, maxFrameBytes);
  frame.writeUInt32BE(length, 0);
  return frame;
};

/** Wraps an already encoded body in a frame header. */
export const frameBody = (body: Uint8Array, maxFrameBytes = DEFAULT_MAX_FRAME_BYTES): Buffer => {
  if (body.length > maxFrameBytes) throw new FrameTooLarge(body.length, maxFrameBytes);
  const frame = Buffer.allocUnsafe(FRAME_HEADER_BYTES + body.length);
  frame.writeUInt32BE(body.length, 0);
  frame.set(body, FRAME_HEADER_BYTES);
  return frame;
};

/**
 * Splits a byte stream into frame bodies.
 * @example
 * const decoder = new FrameDecoder();
 * stream.on('data', (chunk) => { for (const frame of decoder.push(chunk)) handle(frame); });
 */
export class FrameDecoder {
  private chunks: Buffer[] = [];
  private buffered = 0;
  /** Body length announced by the current header, once it has been read. */
  private expected: number | undefined;
  /** Bytes of an oversized body still to discard. */
  private skipping = 0;
  /** The header of an oversized body, until its first byte says whether it is a frame at all. */
  private oversized: Buffer | undefined;
  /** Framing was lost: nothing more is read. */
  private lost = false;

  constructor(readonly maxFrameBytes = DEFAULT_MAX_FRAME_BYTES) {}

  /** Feeds bytes; returns every frame completed by them, in order (an empty body is a frame too). */
  push(bytes: Uint8Array): DecodedFrame[] {
    if (this.lost) return [];
    let chunk = Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length);
    const out: DecodedFrame[] = [];
    if (this.buffered === 0 && this.expected === undefined && this.skipping === 0 && this.oversized === undefined) {
      // Nothing pending: whole frames come straight out of the chunk, with no copy and no bookkeeping.
      let offset = 0;
      while (chunk.length - offset >= FRAME_HEADER_BYTES) {
        const length = chunk.readUInt32BE(offset);
        const end = offset + FRAME_HEADER_BYTES + length;
        if (length > this.maxFrameBytes || end > chunk.length) break;
        out.push(chunk.subarray(offset + FRAME_HEADER_BYTES, end));
        offset = end;
      }
      if (offset === chunk.length) return out;
      chunk = chunk.subarray(offset);
    }
    this.chunks.push(chunk);
    this.buffered += chunk.length;
    for (;;) {
      if (this.skipping > 0) {
        const n = Math.min(this.skipping, this.buffered);
        this.take(n, true);
        this.skipping -= n;
        if (this.skipping > 0) break;
      }
      if (this.oversized !== undefined) {
        if (this.buffered < 1) break;
        const header = this.oversized;
        const length = header.readUInt32BE(0);
        this.oversized = undefined;
        if (!startsAMap(this.chunks[0]![0]!)) {
          const shown = Buffer.concat([header, this.peek(PREVIEW_BYTES)]);
          // Whole only when it ends a line with nothing after it: otherwise the line may go on in bytes not read.
          const whole = this.buffered === shown.length - FRAME_HEADER_BYTES && shown.at(-1) === 0x0a;
          out.push(new FramingLost(previewOf(shown, whole), length));
          this.lost = true;
          this.chunks = [];
          this.buffered = 0;
          return out;
        }
        out.push(new FrameTooLarge(length, this.maxFrameBytes));
        this.skipping = length;
        continue;
      }
      if (this.expected === undefined) {
        if (this.buffered < FRAME_HEADER_BYTES) break;
        const header = Buffer.from(this.take(FRAME_HEADER_BYTES));
        const length = header.readUInt32BE(0);
        if (length > this.maxFrameBytes) {
          this.oversized = header;
          continue;
        }
        this.expected = length;
      }
      if (this.buffered < this.expected) break;
      out.push(this.take(this.expected));
      this.expected = undefined;
    }
    return out;
  }

  /** Bytes received but not yet part of a complete frame. */
  get pendingBytes(): number {
    return this.buffered;
  }

  /** Up to n buffered bytes, left in place. */
  private peek(n: number): Buffer {
    const parts: Buffer[] = [];
    let need = n;
    for (const chunk of this.chunks) {
      if (need <= 0) break;
      parts.push(chunk.subarray(0, need));
      need -= Math.min(need, chunk.length);
    }
    return Buffer.concat(parts);
  }

  /** Removes n buffered bytes; returns them unless `discard` (then nothing is copied). */
  private take(n: number, discard = false): Buffer {
    this.buffered -= n;
    const first = this.chunks[0];
    if (first !== undefined && first.length >= n) {
      if (first.length === n) this.chunks.shift();
      else this.chunks[0] = first.subarray(n);
      return first.subarray(0, n);
    }
    const parts: Buffer[] = [];
    let need = n;
    while (need > 0) {
      const head = this.chunks[0]!;
      if (head.length <= need) {
        if (!discard) parts.push(head);
        this.chunks.shift();
        need -= head.length;
      } else {
        if (!discard) parts.push(head.subarray(0, need));
        this.chunks[0] = head.subarray(need);
        need = 0;
      }
    }
    return discard ? EMPTY : Buffer.concat(parts, n);
  }
}
