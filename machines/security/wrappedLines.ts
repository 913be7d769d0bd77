/**
 * Needles an encoder's line wrapping cuts: base64 at 76 or 64 characters a line, `xxd -p` at 60,
 * so an encoded value is often in two lines or more. A line break counts as wrapping when the
 * whole line before it is base64 or hex (4 characters or more, nothing else); a needle is found
 * in the text with those breaks left out, and stands for all it covers, breaks included. Whether a
 * break counts is settled by what comes before it, so a text arriving in pieces is read the same.
 */
import type { Found, StringFinder } from './stringFinder.ts';

/** The shortest line taken for an encoder's. */
const SHORTEST_WRAPPED_LINE = 4;

const isEncodedChar = (code: number): boolean =>
  (code >= 0x30 && code <= 0x39) || // 0-9
  (code >= 0x41 && code <= 0x5a) || // A-Z
  (code >= 0x61 && code <= 0x7a) || // a-z
  code === 0x2b || // +
  code === 0x2f || // /
  code === 0x3d || // =
  code === 0x5f || // _
  code === 0x2d; // -

/** `text` with its wrapping breaks left out, where each of its characters is in `text`, and where in it each break was. */
type Unwrapped = Readonly<{ joined: string; at: Int32Array; breaks: readonly number[] }>;

/**
 * The line a text arriving in pieces is in when a piece ends: how long it is so far (up to what
 * counts), whether it is all base64 or hex, and whether the piece ended in a carriage return
 * (the line's end if a line feed comes next, else a character of the line).
 */
export type LineSoFar = Readonly<{ length: number; encoded: boolean; carriageReturn?: true }>;

export const NEW_LINE: LineSoFar = { length: 0, encoded: true };

/** The line `before` says, as `text` goes on with it: a carriage return not followed by a line feed is part of it. */
const goingOn = (before: LineSoFar, text: string): LineSoFar =>
  before.carriageReturn ? { length: before.length, encoded: before.encoded && text.startsWith('\n') } : before;

/** The line `text` ends in, given the one it began in. */
export const lineAfter = (before: LineSoFar, text: string): LineSoFar => {
  if (text === '') return before;
  const lastBreak = text.lastIndexOf('\n');
  let { length, encoded } = lastBreak >= 0 ? NEW_LINE : goingOn(before, text);
  const carriageReturn = text.charCodeAt(text.length - 1) === 0x0d;
  for (let c = lastBreak + 1; c < text.length - (carriageReturn ? 1 : 0); c++) {
    encoded &&= isEncodedChar(text.charCodeAt(c));
    length = Math.min(SHORTEST_WRAPPED_LINE, length + 1);
  }
  return carriageReturn ? { length, encoded, carriageReturn } : { length, encoded };
};

/** Whether text[start, end) is all base64 or hex and, after `line` (what came of the line before `start`), long enough to be an encoder's. */
const isWrapped = (text: string, start: number, end: number, line: LineSoFar): boolean => {
  if (!line.encoded || line.length + end - start < SHORTEST_WRAPPED_LINE) return false;
  for (let c = start; c < end; c++) if (!isEncodedChar(text.charCodeAt(c))) return false;
  return true;
};

/**
 * A line after a break that is all base64 or hex, long enough, and ends in a break (or, in an
 * open text, a carriage return at its end). Looked for natively first: a scrub runs once a tool
 * call, too seldom for the engine to optimise a loop over every line, and most texts have no such line.
 */
const WRAPPED_LINE_AFTER_BREAK = /\n[0-9A-Za-z+/=_-]{4,}(?:\r?\n|\r$)/;

/** Whether the first line of `text`, going on from `line`, is all base64 or hex up to its first break or its end. */
const firstLineMayWrap = (text: string, line: LineSoFar): boolean => {
  if (!line.encoded) return false;
  for (let c = 0; c < text.length; c++) {
    const code = text.charCodeAt(c);
    if (code === 0x0a || code === 0x0d) return true;
    if (!isEncodedChar(code)) return false;
  }
  return true;
};

/**
 * Where each wrapping break in `text` is, as [start, end) pairs, its first line taken to begin as
 * `before` says; `open`: the text may go on, so a carriage return at its end after a wrapped line
 * counts too (a line feed may follow). Plain loops: a scrub runs this on every tool result.
 */
const wrappingBreaks = (text: string, before: LineSoFar, open: boolean): number[] => {
  const breaks: number[] = [];
  let line = goingOn(before, text);
  if (!firstLineMayWrap(text, line) && !WRAPPED_LINE_AFTER_BREAK.test(text)) return breaks;
  let lineStart = 0;
  for (let i = text.indexOf('\n'); i >= 0; i = text.indexOf('\n', i + 1)) {
    const end = i > lineStart && text.charCodeAt(i - 1) === 0x0d ? i - 1 : i;
    if (isWrapped(text, lineStart, end, line)) breaks.push(end, i + 1);
    line = NEW_LINE;
    lineStart = i + 1;
  }
  const last = text.length - 1;
  if (open && text.charCodeAt(last) === 0x0d && last >= lineStart && isWrapped(text, lineStart, last, line)) breaks.push(last, last + 1);
  return breaks;
};

/** `text` with the wrapping breaks `removed` names (see wrappingBreaks) left out. */
const unwrapped = (text: string, removed: readonly number[]): Unwrapped => {
  const at = new Int32Array(text.length);
  const breaks: number[] = [];
  let joined = '';
  let length = 0;
  let from = 0;
  for (let r = 0; r <= removed.length; r += 2) {
    const start = r < removed.length ? removed[r]! : text.length;
    joined += text.slice(from, start);
    for (let c = from; c < start; c++) at[length++] = c;
    if (start < text.length) breaks.push(length);
    from = r < removed.length ? removed[r + 1]! : text.length;
  }
  return { joined, at: at.subarray(0, length), breaks };
};

/**
 * Adds to `found` where `finder`'s needles are in `text`, those a wrapping break cuts included
 * (looked for only around such breaks, so text without them costs one pass over its lines).
 */
export const findAcrossLines = (
  finder: StringFinder,
  text: string,
  found: Found[],
  rankFrom = 0,
  before: LineSoFar = NEW_LINE,
): Found[] => {
  finder.find(text, found, rankFrom);
  if (finder.longest === 0 || !text.includes('\n')) return found;
  const removed = wrappingBreaks(text, before, false);
  if (removed.length === 0) return found;
  const lines = unwrapped(text, removed);
  const reach = Math.max(0, finder.longest - 1);
  // Around each break, as far as a needle through it could reach; windows that meet are one.
  let windowStart = -1;
  let windowEnd = -1;
  for (const at of lines.breaks) {
    const from = Math.max(0, at - reach);
    const to = Math.min(lines.joined.length, at + reach);
    if (from > windowEnd) {
      if (windowEnd > windowStart) lookAcross(finder, lines, windowStart, windowEnd, found, rankFrom);
      windowStart = from;
    }
    windowEnd = to;
  }
  if (windowEnd > windowStart) lookAcross(finder, lines, windowStart, windowEnd, found, rankFrom);
  return found;
};

/** Adds to `found` the needles in lines.joined[from, to) that a break cuts, where they are in the text itself. */
const lookAcross = (finder: StringFinder, lines: Unwrapped, from: number, to: number, found: Found[], rankFrom: number): void => {
  for (const hit of finder.find(lines.joined.slice(from, to), [], rankFrom)) {
    const start = lines.at[from + hit.start]!;
    const end = lines.at[from + hit.end - 1]! + 1;
    // One that no break cuts was found in the text itself.
    if (end - start !== hit.end - hit.start) found.push({ ...hit, start, end });
  }
};

/**
 * Where in `text` a needle could begin and not have ended yet, cut by a wrapping break or not
 * (see StringFinder.openFrom); `before`, the line the text began in.
 */
export const openAcrossLines = (finder: StringFinder, text: string, before: LineSoFar = NEW_LINE): number => {
  const open = finder.openFrom(text);
  if (finder.longest === 0 || (!text.includes('\n') && !text.endsWith('\r'))) return open;
  const removed = wrappingBreaks(text, before, true);
  if (removed.length === 0) return open;
  const lines = unwrapped(text, removed);
  const joinedOpen = finder.openFrom(lines.joined);
  return joinedOpen < lines.joined.length ? Math.min(open, lines.at[joinedOpen]!) : open;
};
