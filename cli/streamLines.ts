/**
 * Streamed text as whole lines, for a terminal where the user types on a prompt line below: a
 * line is given out once it ends, or once it fills the terminal's width (cut at the last space
 * when there is one); the rest is the line in progress, without a line break and shorter than the
 * width (of 21 columns or more), so it fits on one row above the prompt until it is given out. Pure.
 */
export class StreamLines {
  private pending = '';

  constructor(private readonly width: () => number) {}

  /** Adds streamed text; returns the lines it completed. */
  push(text: string): string[] {
    this.pending += text.replace(/\r\n?/g, '\n');
    const lines: string[] = [];
    for (;;) {
      const newline = this.pending.indexOf('\n');
      if (newline >= 0 && newline <= this.columns()) {
        lines.push(this.pending.slice(0, newline));
        this.pending = this.pending.slice(newline + 1);
        continue;
      }
      if ([...this.pending].length <= this.columns()) return lines;
      const chars = [...this.pending];
      const head = chars.slice(0, this.columns()).join('');
      const space = head.lastIndexOf(' ');
      const cut = space > 0 ? space : head.length;
      lines.push(this.pending.slice(0, cut));
      this.pending = this.pending.slice(space > 0 ? cut + 1 : cut);
    }
  }

  /** The line in progress: what `push` took that no line given out holds yet ('' when none). */
  get partial(): string {
    return this.pending;
  }

  /** The rest of the text (the reply ended), as a last line; undefined when nothing is left. */
  flush(): string | undefined {
    const rest = this.pending;
    this.pending = '';
    return rest === '' ? undefined : rest;
  }

  private columns(): number {
    return Math.max(20, this.width() - 1);
  }
}
