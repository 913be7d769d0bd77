/**
 * Text from homed shown on a terminal: a model's words, and what they quote of a tool's output,
 * can hold control sequences that a terminal would obey (retitle the window, write the
 * clipboard, clear the screen, hide text, move back over a line). Shown on a terminal, every
 * control character but the line feed and the tab becomes its visible symbol instead (ESC as ␛,
 * a lone carriage return as ␍); a carriage return before a line feed is left out. Piped output
 * keeps the text as homed sent it.
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
