/**
 * The lines in progress of streamed replies, one row each just above the prompt: whatever is
 * printed goes above them, and every draw clears them and the prompt row and draws them again
 * with the prompt, so a line is seen as it grows, never mixes with what is typed, and never stays
 * on screen stale. Assumes the prompt and what is typed fit on one row.
 */

/** The terminal the rows are drawn on: raw output, and the prompt redrawn (with what is typed) at the cursor. */
export type LiveTerminal = Readonly<{
  write: (text: string) => void;
  prompt: () => void;
  columns: () => number;
}>;

export class LiveLines {
  /** Each reply's line in progress, in the order they began; one row each. */
  private readonly partials = new Map<object, string>();
  /** Rows the partials take on screen now, between the printed lines and the prompt. */
  private rows = 0;

  constructor(private readonly terminal: LiveTerminal) {}

  /** Prints `text` (one or more lines) above the lines in progress and the prompt. */
  print(text: string): void {
    this.draw(`${text}\n`);
  }

  /** Prints the lines of `reply` that `completed`, and shows `partial` as its line in progress (none or '' takes its row away). */
  update(reply: object, completed: readonly string[], partial?: string): void {
    if (partial) this.partials.set(reply, partial);
    else this.partials.delete(reply);
    this.draw(completed.map((line) => `${line}\n`).join(''));
  }

  /** The person pressed Enter: the terminal moved below `echo` (the prompt and what was typed), which goes above the lines in progress. */
  submitted(echo: string): void {
    if (this.rows === 0) return;
    this.draw(`${echo}\n`, Math.max(1, Math.ceil([...echo].length / this.terminal.columns())));
  }

  /** Leaves the lines in progress on screen as printed lines and forgets them (their replies were cut off). */
  keep(): void {
    this.partials.clear();
    this.rows = 0;
  }

  /** Clears the rows from the lines in progress (and `above` more) down to the prompt, prints, redraws them and the prompt. */
  private draw(printed: string, above = 0): void {
    const up = this.rows + above;
    const erase = up === 0 ? '\r\x1b[2K' : `\x1b[${up}A\r\x1b[J`;
    const live = [...this.partials.values()].map((partial) => `${oneRow(partial, this.terminal.columns())}\n`).join('');
    this.terminal.write(`${erase}${printed}${live}`);
    this.rows = this.partials.size;
    this.terminal.prompt();
  }
}

/** A line in progress cut to less than the terminal's width, so it takes exactly one row. */
const oneRow = (text: string, columns: number): string => {
  const chars = [...text];
  return chars.length < columns ? text : `${chars.slice(0, Math.max(0, columns - 2)).join('')}…`;
};
