/**
 * The ways a secret's value can be written in what a tool or a model hands back, so the scrub
 * finds it there too: escaped inside JSON strings, and encoded as a tool given the value would
 * encode it (base64, hex, a URL, HTML). Reversed, split or otherwise transformed values stay out
 * of reach of any scrub.
 */

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
  return [value, json, ascii, slashed, ascii.replaceAll('/', '\\/'), jsonInside(json), jsonInside(slashed)];
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

const HTML_ESCAPES: Readonly<Record<string, string>> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

/** The value as tools commonly encode it: base64 (as a whole or inside more), hex, in a URL or a form, as HTML. */
const encodedForms = (value: string): string[] => {
  const bytes = Buffer.from(value, 'utf8');
  const hex = bytes.toString('hex');
  const url = encodeURIComponent(value);
  return [
    ...base64Cores(bytes),
    hex,
    hex.toUpperCase(),
    url,
    url.replaceAll('%20', '+'),
    value.replace(/[&<>"']/g, (c) => HTML_ESCAPES[c]!),
  ].filter((form) => form.length >= SHORTEST_ENCODED_FORM && form !== value);
};

/** Every form of `value` the scrub looks for, itself first, each once. */
export const writtenForms = (value: string): string[] => [...new Set([...escapedForms(value), ...encodedForms(value)])];
