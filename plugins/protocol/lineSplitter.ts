/**
 * Splits a byte stream into newline-terminated lines without ever holding more than `maxBytes`
 * of one line, so a 64 MiB line costs at most `maxBytes` of memory, and a line sent a byte at a
 * time costs no more than its bytes. A line that passes the limit either ends the stream (`end`,
 * the default: a socket client that sends one is done) or is cut there, its rest dropped up to
 * its newline, and the lines after it read on (`cut`: a plugin's stderr). Pure (no I/O); UTF-8
 * is decoded per whole line, so a character split across chunks arrives intact.
 */

export type SplitResult = Readonly<{
  /** Complete lines in arrival order, without their `\n` (nor a `\r` before it). */
  lines: string[];
  /** `end`: set when the line in progress passed the limit; the splitter takes nothing more after it. */
  tooLong: boolean;
  /** `cut`: the indices in `lines` of lines cut at the limit (their first `maxBytes` bytes). */
  cut: number[];
}>;

export type Overlong = 'end' | 'cut';

const NEWLINE = 0x0a;
const FIRST_CAPACITY = 4096;

export class LineSplitter {
  /** The unfinished line: `pending[0, length)`, grown by doubling up to `maxBytes`. */
  private pending = Buffer.alloc(0);
  private length = 0;
  private overflowed = false;
  /** `cut`: the line in progress was cut; its rest is dropped up to its newline. */
  private dropping = false;

  constructor(
    readonly maxBytes: number,
    readonly overlong: Overlong = 'end',
  ) {}

  /** Feeds a chunk; with `end`, after a too-long line every later chunk is ignored (the connection is over). */
  push(chunk: Buffer): SplitResult {
    const lines: string[] = [];
    const cut: number[] = [];
    if (this.overflowed) return { lines, tooLong: true, cut };
    let start = 0;
    for (let end = chunk.indexOf(NEWLINE, start); end !== -1; end = chunk.indexOf(NEWLINE, start)) {
      if (this.dropping) this.dropping = false;
      else if (this.length + (end - start) > this.maxBytes) {
        if (this.overlong === 'end') return this.overflow(lines, cut);
        this.cutAt(chunk.subarray(start, end), lines, cut);
        this.dropping = false;
      } else lines.push(this.take(chunk.subarray(start, end)));
      start = end + 1;
    }
    if (start < chunk.length && !this.dropping) {
      if (this.length + (chunk.length - start) <= this.maxBytes) this.keep(chunk.subarray(start));
      else if (this.overlong === 'end') return this.overflow(lines, cut);
      else this.cutAt(chunk.subarray(start), lines, cut);
    }
    return { lines, tooLong: false, cut };
  }

  /** The unfinished line at the end of the stream (its last line had no newline), if any; undefined when it was cut. */
  end(): string | undefined {
    if (this.length === 0 || this.overflowed || this.dropping) return undefined;
    return this.take(Buffer.alloc(0));
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

  /** Gives the line in progress cut at `maxBytes` (with as much of `more` as fits) and drops the rest up to its newline. */
  private cutAt(more: Buffer, lines: string[], cut: number[]): void {
    this.keep(more.subarray(0, this.maxBytes - this.length));
    cut.push(lines.length);
    lines.push(this.pending.subarray(0, this.length).toString('utf8'));
    this.reset();
    this.dropping = true;
  }

  private reset(): void {
    this.length = 0;
    // A large line's buffer is not kept for the rest of a long session.
    if (this.pending.length > FIRST_CAPACITY) this.pending = Buffer.alloc(0);
  }

  private overflow(lines: string[], cut: number[]): SplitResult {
    this.overflowed = true;
    this.length = 0;
    this.pending = Buffer.alloc(0);
    return { lines, tooLong: true, cut };
  }
}
