/**
 * What a plugin's stderr said last that says why it failed, kept for the reason its start failed
 * gets: a syntax error, a package it cannot find, a module it cannot load are said there, and
 * without them the reason read "the plugin connection is closed" wherever a person looked
 * (`homed plugins`, the web UI, the log) but homed's own output.
 */
import { oneVisibleLine } from '../../events/index.ts';

/** How many of its last lines are kept, and how much of the gist a reason quotes. */
const LINES_KEPT = 40;
const GIST_AT_MOST = 300;

/** A stack frame, the code frame's caret line, Node's version line: none says why. */
const NOT_WHY = /^\s*(?:at\s|\^+\s*$|Node\.js v\d)|^\s*$/;
/** A line saying an error and what it is (`TypeError [CODE]: …`, tsx's `file:1:2: ERROR: …`). */
const ERROR_SAID = /\b(?:\w*Error|ERROR)\b[^:]*:\s/;
/** A line naming an error's code alone (Node's `code: 'ERR_…'` after the error itself). */
const ERROR_NAMED = /\bERR_[A-Z_]+\b/;

/**
 * Lines saying the plugin's code cannot load: a syntax error (Node's, or tsx's `ERROR:` from
 * esbuild), a module or package not found, an import its module does not export. The same code
 * fails the same way at every start, so it is not retried (a newcomer's typo printed its stack
 * four times, one a retry, before homed gave up).
 */
const CANNOT_LOAD =
  /\bSyntaxError\b|:\d+:\d+: ERROR: |\bERR_MODULE_NOT_FOUND\b|\bCannot find (?:module|package)\b|does not provide an export named|\bERR_UNKNOWN_FILE_EXTENSION\b/;

export class StderrTail {
  private readonly lines: string[] = [];

  /** A line of its stderr, scrubbed as homed's output shows it. */
  push(line: string): void {
    this.lines.push(line);
    if (this.lines.length > LINES_KEPT) this.lines.shift();
  }

  /** Whether what it said is that its code cannot load, which no retry changes. */
  cannotLoad(): boolean {
    return this.lines.some((line) => CANNOT_LOAD.test(line));
  }

  /**
   * The last line saying an error and what it is, else the last naming one, else the last that is
   * not a stack frame; undefined when it said nothing.
   */
  gist(): string | undefined {
    const said = this.lines.filter((line) => !NOT_WHY.test(line));
    const line = said.findLast((l) => ERROR_SAID.test(l)) ?? said.findLast((l) => ERROR_NAMED.test(l)) ?? said.at(-1);
    return line === undefined ? undefined : oneVisibleLine(line.trim(), GIST_AT_MOST);
  }
}
