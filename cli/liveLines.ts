/**
 * The lines in progress of streamed replies, one row each just above the prompt: whatever is
 * printed goes above them, and every draw clears them and the prompt row and draws them again
 * with the prompt, so a line is seen as it grows, never mixes with what is typed, and never stays
 * on screen stale. What is said about them once they show (a /stop and its answer) goes below
 * them instead, on rows of its own redrawn with them, and is printed after the line that ends
 * first. Assumes the prompt and what is typed fit on one row.
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
  /** Lines said after the lines in progress showed, in order: drawn below them until one of them ends. */
  private readonly after: string[] = [];
  /** Rows the partials and the lines after them take on screen now, between the printed lines and the prompt. */
  private rows = 0;

  constructor(private readonly terminal: LiveTerminal) {}

  /** Prints `text` (one or more lines) above the lines in progress and the prompt (below them, after a line said after them). */
  print(text: string): void {
    if (this.after.length > 0) this.printAfter(text);
    else this.draw(`${text}\n`);
  }

  /** Prints `text` below the lines in progress, to stay after them: it is printed after the first of them to end. */
  printAfter(text: string): void {
    if (this.partials.size === 0) return this.draw(`${text}\n`);
    this.after.push(text);
    this.draw('');
  }

  /** Prints the lines of `reply` that `completed`, and shows `partial` as its line in progress (none or '' takes its row away). */
  update(reply: object, completed: readonly string[], partial?: string): void {
    const ended = !partial && this.partials.delete(reply);
    if (partial) this.partials.set(reply, partial);
    this.draw(completed.map((line) => `${line}\n`).join(''), 0, ended);
  }

  /**
   * The person pressed Enter: the terminal moved below `echo` (the prompt and what was typed),
   * which goes above the lines in progress, or below them when it is `after` them (a /stop).
   */
  submitted(echo: string, after = false): void {
    if (this.rows === 0) return;
    const above = rowsOf(echo, this.terminal.columns());
    if (after || this.after.length > 0) {
      this.after.push(echo);
      this.draw('', above);
    } else this.draw(`${echo}\n`, above);
  }

  /** Leaves the lines in progress (and those after them) on screen as printed lines and forgets them (their replies were cut off). */
  keep(): void {
    this.partials.clear();
    this.after.length = 0;
    this.rows = 0;
  }

  /**
   * Clears the rows from the lines in progress (and `above` more) down to the prompt, prints,
   * redraws them and the prompt. The lines after them are printed too once `released` (a line
   * they came after ended) or when no line is in progress any more.
   */
  private draw(printed: string, above = 0, released = false): void {
    const columns = this.terminal.columns();
    const up = this.rows + above;
    const erase = up === 0 ? '\r\x1b[2K' : `\x1b[${up}A\r\x1b[J`;
    const afterLines = (lines: readonly string[]) => lines.map((line) => `${line}\n`).join('');
    const done = released || this.partials.size === 0 ? afterLines(this.after.splice(0)) : '';
    const live = [...this.partials.values()].map((partial) => `${oneRow(partial, columns)}\n`).join('') + afterLines(this.after);
    this.terminal.write(`${erase}${printed}${done}${live}`);
    this.rows = this.partials.size + this.after.reduce((rows, line) => rows + rowsOf(line, columns), 0);
    this.terminal.prompt();
  }
}

/** A line in progress cut to less than the terminal's width, so it takes exactly one row. */
const oneRow = (text: string, columns: number): string => {
  const chars = [...text];
  return chars.length < columns ? text : `${chars.slice(0, Math.max(0, columns - 2)).join('')}…`;
};

/** Colours and other control sequences, which take no room on screen. */
const CONTROL = new RegExp(`${String.fromCharCode(27)}\\[[0-9;?]*[@-~]`, 'g');

/** The rows `text` takes on a terminal `columns` wide: each of its lines one, or more when it wraps. */
const rowsOf = (text: string, columns: number): number =>
  text.split('\n').reduce((rows, line) => rows + Math.max(1, Math.ceil([...line.replace(CONTROL, '')].length / columns)), 0);
