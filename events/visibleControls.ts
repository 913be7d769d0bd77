/**
 * Text shown on a terminal that someone else wrote (a model's words and what they quote of a
 * tool's output, a plugin's log line) can hold control sequences the terminal would obey: retitle
 * the window, write the clipboard, clear the screen, hide text, move back over a line. Made
 * visible, every control character but the line feed and the tab becomes its symbol instead (ESC
 * as ␛, a lone carriage return as ␍); a carriage return before a line feed is left out.
 */

/** C0 controls but tab and line feed, DEL, and the C1 controls. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what is looked for
const CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/g;

/** The Control Pictures block has a symbol for each C0 control (U+2400 + code) and for DEL (U+2421). */
const symbolOf = (control: string): string => {
  const code = control.charCodeAt(0);
  if (code < 0x20) return String.fromCharCode(0x2400 + code);
  return code === 0x7f ? '\u2421' : '\ufffd';
};

export const visibleControls = (text: string): string => text.replaceAll('\r\n', '\n').replace(CONTROL, symbolOf);

/** Every string in `value` (a reply parsed from JSON) with its control characters visible. */
export const withVisibleControls = (_key: string, value: unknown): unknown => (typeof value === 'string' ? visibleControls(value) : value);

/**
 * The line and paragraph separators, which some viewers break a line at, and the bidirectional
 * overrides and isolates, which make a line read otherwise than it runs ("Trojan Source"): in a
 * line of homed's output, someone else's words use them to pass for something else.
 */
const LINE_BENDERS = /[\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;

const shownBender = (bender: string): string =>
  bender === '\u2028' || bender === '\u2029' ? '⏎' : `⟨U+${bender.charCodeAt(0).toString(16).toUpperCase()}⟩`;

/** Someone else's text as one line of homed's output: controls visible, line breaks shown as ⏎, the bidirectional controls named. */
export const asOneLine = (text: string): string => visibleControls(text).replaceAll('\n', '⏎').replace(LINE_BENDERS, shownBender);

/**
 * Someone else's text as one line of homed's output (see asOneLine), cut at `atMost` characters;
 * `keepEnd` of them its last ones (where a message says what to do), the middle left out.
 */
export const oneVisibleLine = (text: string, atMost: number, keepEnd = 0): string => {
  if (text.length <= atMost) return asOneLine(text);
  const end = Math.min(keepEnd, atMost);
  const left = `… (${(text.length - atMost).toLocaleString('en')} more characters)`;
  const head = asOneLine(text.slice(0, atMost - end));
  return end > 0 ? `${head}${left} …${asOneLine(text.slice(text.length - end))}` : `${head}${left}`;
};
