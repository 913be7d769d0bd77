/** Where a JSON text stops being JSON, as a person finds it in an editor: line and column. */

/** The parse error with its line and column (V8's messages do not always carry a position). */
export function describeJsonSyntaxError(text: string, error: Error): string {
  const offset = jsonErrorOffset(text);
  const before = text.slice(0, Math.max(0, offset));
  const line = before.split('\n').length;
  const column = offset - before.lastIndexOf('\n');
  return `line ${line}, column ${column} (${error.message.replace(/\s*in JSON at position \d+.*$/, '')})`;
}

/** The offset of the first character that makes `text` invalid JSON (text.length for a premature end). */
function jsonErrorOffset(text: string): number {
  let i = 0;
  const fail = (): never => {
    throw new JsonStop(i);
  };
  const space = (): void => {
    while (i < text.length && ' \t\n\r'.includes(text[i] ?? '')) i++;
  };
  const expect = (c: string): void => {
    space();
    if (text[i] !== c) fail();
    i++;
  };
  const string = (): void => {
    if (text[i] !== '"') fail();
    i++;
    for (;;) {
      const c = text[i];
      if (c === undefined || c < ' ') fail();
      i += c === '\\' ? 2 : 1;
      if (c === '"') return;
    }
  };
  const number = /-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/y;
  const value = (): void => {
    space();
    const c = text[i];
    if (c === '{' || c === '[') {
      const close = c === '{' ? '}' : ']';
      i++;
      space();
      if (text[i] === close) return void i++;
      for (;;) {
        if (c === '{') {
          space();
          string();
          expect(':');
        }
        value();
        space();
        if (text[i] === close) return void i++;
        expect(',');
      }
    }
    if (c === '"') return string();
    number.lastIndex = i;
    if (number.test(text)) {
      i = number.lastIndex;
      return;
    }
    const literal = ['true', 'false', 'null'].find((word) => text.startsWith(word, i));
    if (literal === undefined) fail();
    else i += literal.length;
  };
  try {
    value();
    space();
    return i;
  } catch (stop) {
    if (stop instanceof JsonStop) return Math.min(stop.offset, text.length);
    throw stop;
  }
}

class JsonStop {
  constructor(readonly offset: number) {}
}
