/**
 * A terminal screen for unit tests, as text: it applies what a program writes (characters with
 * wrapping at the width, `\r`, `\n` as a tty turns it into CR LF, and the CSI sequences readline
 * and waiter use: cursor up/down/left/right, column, erase in line and erase below) and keeps
 * every row written, scrollback included. Colours and other sequences are ignored. It is a
 * writable stream with `isTTY` and `columns`, so `readline` draws its prompt on it as on a tty.
 */
import { Writable } from 'node:stream';

/** A control sequence at the start of the text: ESC [ parameters, then its final character. */
const CSI = new RegExp(`^${String.fromCharCode(27)}\\[([0-9;?]*)([@-~])`);

export class FakeTerminal extends Writable {
  readonly isTTY = true;
  private readonly grid: string[][] = [[]];
  private row = 0;
  private col = 0;

  constructor(readonly columns: number) {
    super({ decodeStrings: false });
  }

  override _write(chunk: string | Buffer, _encoding: string, done: () => void): void {
    this.apply(typeof chunk === 'string' ? chunk : chunk.toString('utf8'));
    done();
  }

  /** Applies `text` at once (a write of nothing pending reaches `_write` at once too). */
  apply(text: string): void {
    let rest = text;
    while (rest.length > 0) {
      const csi = CSI.exec(rest);
      if (csi) {
        this.control(csi[2]!, csi[1]!);
        rest = rest.slice(csi[0].length);
        continue;
      }
      const [char] = rest;
      this.put(char!);
      rest = rest.slice(char!.length);
    }
  }

  /** The rows as text, trailing spaces and the empty rows below the last written one taken off. */
  screen(): string[] {
    const rows = this.grid.map((cells) => cells.join('').trimEnd());
    while (rows.length > this.row + 1 && rows.at(-1) === '') rows.pop();
    return rows;
  }

  /** Where the cursor is: its row from the top of the scrollback and its column. */
  cursor(): Readonly<{ row: number; col: number }> {
    return { row: this.row, col: this.col };
  }

  private put(char: string): void {
    if (char === '\r') this.col = 0;
    else if (char === '\n') this.moveTo(this.row + 1, 0);
    else if (char >= ' ') {
      if (this.col >= this.columns) this.moveTo(this.row + 1, 0);
      this.line()[this.col] = char;
      this.col += 1;
    }
  }

  private control(final: string, params: string): void {
    const n = Number.parseInt(params || '1', 10);
    switch (final) {
      case 'A':
        return this.moveTo(Math.max(0, this.row - n), this.col);
      case 'B':
        return this.moveTo(this.row + n, this.col);
      case 'C':
        return this.moveTo(this.row, Math.min(this.columns - 1, this.col + n));
      case 'D':
        return this.moveTo(this.row, Math.max(0, this.col - n));
      case 'G':
        return this.moveTo(this.row, n - 1);
      case 'K':
        if (params === '2') this.grid[this.row] = [];
        else this.line().splice(this.col);
        return;
      case 'J':
        if (params === '' || params === '0') {
          this.line().splice(this.col);
          this.grid.splice(this.row + 1);
        }
        return;
      default:
        return; // colours and modes
    }
  }

  private moveTo(row: number, col: number): void {
    this.row = row;
    this.col = Math.min(col, this.columns);
    while (this.grid.length <= row) this.grid.push([]);
  }

  /** The cursor's row, filled with spaces up to the cursor. */
  private line(): string[] {
    const cells = this.grid[this.row]!;
    for (let i = 0; i < this.col; i += 1) cells[i] ??= ' ';
    return cells;
  }
}
