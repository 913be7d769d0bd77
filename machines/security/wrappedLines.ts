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

/**
 * `text` with its wrapping breaks left out, its first line taken to begin as `before` says;
 * `open`: the text may go on, so a carriage return at its end after a wrapped line is left out too
 * (a line feed may follow). Undefined when there is no such break.
 */
const unwrapped = (text: string, before: LineSoFar, open: boolean): Unwrapped | undefined => {
  const removed: (readonly [number, number])[] = [];
  let line = goingOn(before, text);
  let lineStart = 0;
  /** Whether text[lineStart, end), after `line`, makes a line an encoder wrapped (the first other character ends the look). */
  const wrapped = (end: number): boolean => {
    if (!line.encoded || line.length + end - lineStart < SHORTEST_WRAPPED_LINE) return false;
    for (let c = lineStart; c < end; c++) if (!isEncodedChar(text.charCodeAt(c))) return false;
    return true;
  };
  for (let i = text.indexOf('\n'); i >= 0; i = text.indexOf('\n', i + 1)) {
    const end = i > lineStart && text.charCodeAt(i - 1) === 0x0d ? i - 1 : i;
    if (wrapped(end)) removed.push([end, i + 1]);
    line = NEW_LINE;
    lineStart = i + 1;
  }
  if (open && text.endsWith('\r') && text.length - 1 >= lineStart && wrapped(text.length - 1)) removed.push([text.length - 1, text.length]);
  if (removed.length === 0) return undefined;
  const at = new Int32Array(text.length);
  const breaks: number[] = [];
  let joined = '';
  let length = 0;
  let from = 0;
  for (const [start, end] of [...removed, [text.length, text.length] as const]) {
    joined += text.slice(from, start);
    for (let c = from; c < start; c++) at[length++] = c;
    if (start < text.length) breaks.push(length);
    from = end;
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
  const lines = unwrapped(text, before, false);
  if (!lines) return found;
  const reach = Math.max(0, finder.longest - 1);
  // Around each break, as far as a needle through it could reach; windows that meet are one.
  let windowStart = -1;
  let windowEnd = -1;
  const look = (from: number, to: number): void => {
    for (const hit of finder.find(lines.joined.slice(from, to), [], rankFrom)) {
      const start = lines.at[from + hit.start]!;
      const end = lines.at[from + hit.end - 1]! + 1;
      // One that no break cuts was found in the text itself.
      if (end - start !== hit.end - hit.start) found.push({ ...hit, start, end });
    }
  };
  for (const at of lines.breaks) {
    const from = Math.max(0, at - reach);
    const to = Math.min(lines.joined.length, at + reach);
    if (from > windowEnd) {
      if (windowEnd > windowStart) look(windowStart, windowEnd);
      windowStart = from;
    }
    windowEnd = to;
  }
  if (windowEnd > windowStart) look(windowStart, windowEnd);
  return found;
};

/**
 * Where in `text` a needle could begin and not have ended yet, cut by a wrapping break or not
 * (see StringFinder.openFrom); `before`, the line the text began in.
 */
export const openAcrossLines = (finder: StringFinder, text: string, before: LineSoFar = NEW_LINE): number => {
  const open = finder.openFrom(text);
  if (finder.longest === 0 || (!text.includes('\n') && !text.endsWith('\r'))) return open;
  const lines = unwrapped(text, before, true);
  if (!lines) return open;
  const joinedOpen = finder.openFrom(lines.joined);
  return joinedOpen < lines.joined.length ? Math.min(open, lines.at[joinedOpen]!) : open;
};
