/**
 * Length-delimited frames: a 4-byte big-endian body length, then the body. The decoder yields
 * bodies in order whatever the chunking, and skips (and reports) a body over the limit
 * without buffering it, so one oversized frame does not end the stream.
 */
import { encodeBody } from './codec.ts';
import { FrameTooLarge } from './errors.ts';

export const FRAME_HEADER_BYTES = 4;
export const DEFAULT_MAX_FRAME_BYTES = 16 * 1024 * 1024;

const EMPTY = Buffer.alloc(0);

/** What `FrameDecoder.push` yields: a frame body, or the report of a frame it skipped. */
export type DecodedFrame = Buffer | FrameTooLarge;

/**
 * Encodes one value as a frame (header + msgpack body).
 * @throws FrameTooLarge when the body would exceed `maxFrameBytes`.
 * @example socket.write(encodeFrame({ type: 'notify', method: 'tick', params: null }))
 */
export const encodeFrame = (value: unknown, maxFrameBytes = DEFAULT_MAX_FRAME_BYTES): Buffer => frameBody(encodeBody(value), maxFrameBytes);

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

  constructor(readonly maxFrameBytes = DEFAULT_MAX_FRAME_BYTES) {}

  /** Feeds bytes; returns every frame completed by them, in order (an empty body is a frame too). */
  push(chunk: Uint8Array): DecodedFrame[] {
    if (chunk.length > 0) {
      this.chunks.push(Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk.buffer, chunk.byteOffset, chunk.length));
      this.buffered += chunk.length;
    }
    const out: DecodedFrame[] = [];
    for (;;) {
      if (this.skipping > 0) {
        const n = Math.min(this.skipping, this.buffered);
        this.take(n, true);
        this.skipping -= n;
        if (this.skipping > 0) break;
      }
      if (this.expected === undefined) {
        if (this.buffered < FRAME_HEADER_BYTES) break;
        const length = this.take(FRAME_HEADER_BYTES).readUInt32BE(0);
        if (length > this.maxFrameBytes) {
          out.push(new FrameTooLarge(length, this.maxFrameBytes));
          this.skipping = length;
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
