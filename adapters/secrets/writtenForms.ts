/**
 * The ways a secret's value can be written in what a tool or a model hands back, so the scrub
 * finds it there too: escaped inside JSON strings, encoded as a tool given the value would
 * encode it (base64 and hex of its UTF-8 or its UTF-16, as PowerShell and Windows tools encode
 * text; a URL; HTML), and reversed. A value cut into pieces, or transformed another way, stays
 * out of reach of any scrub.
 */

import { isGuessable } from './guessableSecret.ts';

/** An encoded form shorter than this could stand for too much ordinary text to be replaced wherever it occurs. */
export const SHORTEST_ENCODED_FORM = 6;

/** Inside a JSON string, as JSON.stringify writes it (quotes and backslashes escaped). */
const jsonInside = (text: string): string => JSON.stringify(text).slice(1, -1);

/**
 * Inside a JSON string as JavaScript writes it, as Python's json.dumps does (every non-ASCII
 * character as \uXXXX), with '/' escaped as '\/' (PHP), and inside a JSON string that is itself
 * inside one (slashes escaped or not).
 */
const escapedForms = (value: string): string[] => {
  const json = jsonInside(value);
  const ascii = json.replace(/[\u0080-\uffff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
  const slashed = json.replaceAll('/', '\\/');
  // Go's encoding/json and Rails escape these three for HTML's sake unless told not to.
  const htmlSafe = json.replace(/[<>&]/g, (c) => `\\u00${c.charCodeAt(0).toString(16)}`);
  return [
    value,
    json,
    htmlSafe,
    ascii,
    ascii.replace(/\\u[0-9a-f]{4}/g, (unit) => `\\u${unit.slice(2).toUpperCase()}`),
    slashed,
    ascii.replaceAll('/', '\\/'),
    jsonInside(json),
    jsonInside(slashed),
  ];
};

/**
 * The characters of the value's base64 that do not depend on what surrounds it, for each of the
 * three places its first byte can take in a group of three (the value alone, or inside a longer
 * encoded text): a base64 character holds 6 bits, and only those wholly inside the value's bytes
 * are the value's own. Standard and URL-safe alphabets.
 */
const base64Cores = (bytes: Buffer): string[] =>
  [0, 1, 2].flatMap((shift) => {
    const encoded = Buffer.concat([Buffer.alloc(shift), bytes]).toString('base64');
    const first = Math.ceil((8 * shift) / 6);
    const end = Math.floor((8 * (shift + bytes.length)) / 6);
    const core = encoded.slice(first, end);
    return [core, core.replaceAll('+', '-').replaceAll('/', '_')];
  });

/**
 * The value's base64 when it was encoded alone (or ends a longer encoding at a group's end), with
 * its padding and without, in both alphabets: a value of 4 bytes has at most 5 characters of its
 * own in a longer encoding, too few to tell from other text, but encoded alone it has 6 and padding.
 */
const base64Wholes = (bytes: Buffer): string[] => {
  const padded = bytes.toString('base64');
  const urlSafe = padded.replaceAll('+', '-').replaceAll('/', '_');
  return [padded, urlSafe, padded.replace(/=+$/, ''), urlSafe.replace(/=+$/, '')];
};

const HTML_ESCAPES: Readonly<Record<string, string>> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };
/** Quotes as other writers escape them (Python's html.escape, Go's html/template). */
const OTHER_QUOTES: Readonly<Record<string, string>> = { '"': '&#34;', "'": '&#x27;' };

/** `%2f` for `%2F`: percent-escapes as some encoders write them. */
const lowerEscapes = (text: string): string => text.replace(/%[0-9A-F]{2}/g, (percent) => percent.toLowerCase());

/**
 * The value as tools commonly encode it: base64 (alone or inside more), hex, in a URL or a
 * form (with `/` kept as Python's quote does, with RFC 3986's `!'()*` escaped too, escapes in
 * either case), as HTML (quotes as `&quot;`/`&#39;` or `&#34;`/`&#x27;`).
 */
const encodedForms = (value: string): string[] => {
  const bytes = Buffer.from(value, 'utf8');
  const hex = bytes.toString('hex');
  const url = encodeURIComponent(value);
  // RFC 3986's reserved characters that encodeURIComponent leaves as they are.
  const strict = url.replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
  const html = value.replace(/[&<>"']/g, (c) => HTML_ESCAPES[c]!);
  const wide = Buffer.from(value, 'utf16le');
  const wideBigEndian = Buffer.from(wide).swap16();
  return [
    ...base64Cores(bytes),
    ...base64Wholes(bytes),
    hex,
    hex.toUpperCase(),
    // Bytes apart, as openssl (`73:6b`), .NET's BitConverter (`73-6B`) and od-like dumps write them.
    ...[':', '-', ' '].flatMap((separator) => {
      const apart = hex.replace(/..(?!$)/g, `$&${separator}`);
      return [apart, apart.toUpperCase()];
    }),
    ...[wide, wideBigEndian].flatMap((units) => {
      const unitsHex = units.toString('hex');
      return [...base64Cores(units), ...base64Wholes(units), unitsHex, unitsHex.toUpperCase()];
    }),
    ...[url, url.replaceAll('%20', '+'), url.replaceAll('%2F', '/'), strict].flatMap((form) => [form, lowerEscapes(form)]),
    html,
    html.replace(/&quot;|&#39;/g, (named) => OTHER_QUOTES[named === '&quot;' ? '"' : "'"]!),
  ].filter((form) => form.length >= SHORTEST_ENCODED_FORM && form !== value);
};

/** The value written backwards, character by character (`rev`, a string's reverse()). */
const reversed = (value: string): string => [...value].reverse().join('');

/**
 * A value of several lines with its line breaks as the other convention writes them: a key stored
 * from a file with `\n` comes back from a tool that writes `\r\n`, and the other way round (a
 * red team's PEM key came back whole through a tool ending its lines in `\r\n`).
 */
const otherLineEndings = (value: string): string[] =>
  value.includes('\n') ? [value.replace(/\r?\n/g, '\r\n'), value.replace(/\r\n/g, '\n')].filter((form) => form !== value) : [];

/** Every form of `value` the scrub looks for, itself first, each once. */
export const writtenForms = (value: string): string[] => {
  // Backwards only when it is hard to guess: an easy value backwards is too often a word or a number
  // forwards ('live' and 'evil', 'badnet' in 'Extendable', '340050' in a hash).
  const backwardsForms = isGuessable(value) ? [] : escapedForms(reversed(value));
  const lineEndingForms = otherLineEndings(value).flatMap(escapedForms);
  return [...new Set([...escapedForms(value), ...encodedForms(value), ...lineEndingForms, ...backwardsForms])];
};
