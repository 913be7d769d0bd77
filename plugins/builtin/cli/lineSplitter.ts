/**
 * Splits a byte stream into newline-terminated lines without ever holding more than `maxBytes`
 * of one line: a longer line is reported as too long the moment it passes the limit, so a
 * 64 MiB line costs at most `maxBytes` of memory, and a line sent a byte at a time costs no
 * more than its bytes. Pure (no I/O); UTF-8 is decoded per whole line, so a character split
 * across chunks arrives intact.
 */

export type SplitResult = Readonly<{
  /** Complete lines in arrival order, without their `\n` (nor a `\r` before it). */
  lines: string[];
  /** Set when the line in progress passed the limit; the splitter takes nothing more after it. */
  tooLong: boolean;
}>;

const NEWLINE = 0x0a;
const FIRST_CAPACITY = 4096;

export class LineSplitter {
  /** The unfinished line: `pending[0, length)`, grown by doubling up to `maxBytes`. */
  private pending = Buffer.alloc(0);
  private length = 0;
  private overflowed = false;

  constructor(readonly maxBytes: number) {}

  /** Feeds a chunk; after a too-long line every later chunk is ignored (the connection is over). */
  push(chunk: Buffer): SplitResult {
    const lines: string[] = [];
    if (this.overflowed) return { lines, tooLong: true };
    let start = 0;
    for (let end = chunk.indexOf(NEWLINE, start); end !== -1; end = chunk.indexOf(NEWLINE, start)) {
      if (this.length + (end - start) > this.maxBytes) return this.overflow(lines);
      lines.push(this.take(chunk.subarray(start, end)));
      start = end + 1;
    }
    if (start < chunk.length) {
      if (this.length + (chunk.length - start) > this.maxBytes) return this.overflow(lines);
      this.keep(chunk.subarray(start));
    }
    return { lines, tooLong: false };
  }

  /** Bytes of the unfinished line held now (never more than `maxBytes`). */
  get pendingBytes(): number {
    return this.length;
  }

  /** Copies the start of a line: the socket may reuse its chunk, and a slice would pin all of it. */
  private keep(bytes: Buffer): void {
    const needed = this.length + bytes.length;
    if (needed > this.pending.length) {
      const grown = Buffer.allocUnsafe(Math.min(this.maxBytes, Math.max(needed, this.pending.length * 2, FIRST_CAPACITY)));
      this.pending.copy(grown, 0, 0, this.length);
      this.pending = grown;
    }
    bytes.copy(this.pending, this.length);
    this.length = needed;
  }

  private take(last: Buffer): string {
    let whole = last;
    if (this.length > 0) {
      this.keep(last);
      whole = this.pending.subarray(0, this.length);
    }
    const text = whole.toString('utf8');
    this.reset();
    return text.endsWith('\r') ? text.slice(0, -1) : text;
  }

  private reset(): void {
    this.length = 0;
    // A large line's buffer is not kept for the rest of a long session.
    if (this.pending.length > FIRST_CAPACITY) this.pending = Buffer.alloc(0);
  }

  private overflow(lines: string[]): SplitResult {
    this.overflowed = true;
    this.length = 0;
    this.pending = Buffer.alloc(0);
    return { lines, tooLong: true };
  }
}
