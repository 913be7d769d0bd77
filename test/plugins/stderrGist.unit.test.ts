/** What a plugin's stderr said last that says why it failed: the line naming an error, not its stack. */
import { describe, expect, it } from 'vitest';
import { StderrTail } from '../../plugins/host/stderrGist.ts';

const tailOf = (lines: readonly string[]): StderrTail => {
  const tail = new StderrTail();
  for (const line of lines) tail.push(line);
  return tail;
};

describe('StderrTail', () => {
  it("gives the last line naming an error, past the stack's frames, the caret and Node's version", () => {
    const tail = tailOf([
      'node:internal/process/esm_loader:40',
      '/data/plugins/notes/main.ts:1:18: ERROR: Unexpected ";"',
      '    at failureErrorWithLog (/x/node_modules/esbuild/lib/main.js:1472:15)',
      '    at /x/node_modules/esbuild/lib/main.js:755:50',
      '                 ^',
      '',
      'Node.js v20.20.2',
    ]);
    expect(tail.gist()).toBe('/data/plugins/notes/main.ts:1:18: ERROR: Unexpected ";"');
  });

  it("gives Node's error line, not the code it prints after it", () => {
    const tail = tailOf([
      'node:internal/modules/esm/get_format:189',
      '  throw new ERR_UNKNOWN_FILE_EXTENSION(ext, filepath);',
      '        ^',
      'TypeError [ERR_UNKNOWN_FILE_EXTENSION]: Unknown file extension ".ts" for /x/sdk/index.ts',
      '    at defaultLoad (node:internal/modules/esm/load:145:22) {',
      "  code: 'ERR_UNKNOWN_FILE_EXTENSION'",
      '}',
      'Node.js v20.20.2',
    ]);
    expect(tail.gist()).toBe('TypeError [ERR_UNKNOWN_FILE_EXTENSION]: Unknown file extension ".ts" for /x/sdk/index.ts');
    expect(tailOf(['starting', "  code: 'ERR_MODULE_NOT_FOUND'", '}']).gist()).toBe("code: 'ERR_MODULE_NOT_FOUND'");
  });

  it('gives the last line said when none names an error, and nothing when it said nothing', () => {
    expect(tailOf(['starting', 'could not open the config, giving up']).gist()).toBe('could not open the config, giving up');
    expect(tailOf(['    at main (/x/main.ts:3:1)', '']).gist()).toBeUndefined();
    expect(new StderrTail().gist()).toBeUndefined();
  });

  it('keeps only its last lines, and quotes one line at most 300 characters long', () => {
    const tail = tailOf(['TypeError: an early one', ...Array.from({ length: 40 }, (_, i) => `line ${i}`)]);
    expect(tail.gist()).toBe('line 39');
    expect(tailOf([`Error: ${'x'.repeat(400)}`]).gist()).toMatch(/^Error: x+… \(107 more characters\)$/);
  });
});
