/** A command line parseArgs refuses is said in one line a person reads: the closest option, or how to give a value. */
import { describe, expect, it } from 'vitest';
import { parse, positiveInteger } from '../../cli/args.ts';

const OPTIONS = { data: { type: 'string' }, limit: { type: 'string' }, follow: { type: 'boolean' } } as const;

const refusal = (args: string[], allowPositionals = false): string => {
  try {
    parse(args, OPTIONS, allowPositionals);
  } catch (error) {
    return (error as Error).message;
  }
  throw new Error(`parse(${args.join(' ')}) was not refused`);
};

describe('command-line parsing', () => {
  it('names an unknown option with the closest known one', () => {
    expect(refusal(['--dta', 'x'])).toBe('unknown option --dta; did you mean --data?');
    expect(refusal(['--folow'])).toBe('unknown option --folow; did you mean --follow?');
    expect(refusal(['--zzzz'])).toBe('unknown option --zzzz');
  });

  it('says how to give a value that starts with a dash', () => {
    expect(refusal(['--limit', '-3'])).toBe(
      "--limit needs a value, and '-3' after it is read as an option; if it is the value, write --limit=-3",
    );
    expect(refusal(['--limit', '--data', 'x'])).toBe(
      "--limit needs a value, and '--data' after it is read as an option; if it is the value, write --limit=--data",
    );
    // Given last, with nothing after it, it needs a value and that is all.
    expect(refusal(['--data'])).toBe('--data needs a value');
    expect(parse(['--limit=-1'], OPTIONS).values.limit).toBe('-1');
  });

  it('points a command that takes words to -- for one that starts with a dash', () => {
    expect(refusal(['-1 is negative?'], true)).toBe(`unknown option -1; words that start with '-' go after --: -- "-1 …"`);
    expect(parse(['--', '-1 is negative?'], OPTIONS, true).positionals).toEqual(['-1 is negative?']);
    // A long option is an option mistyped, not a word.
    expect(refusal(['--zzzz'], true)).toBe('unknown option --zzzz');
  });

  it('says a command that takes no words was given one', () => {
    expect(refusal(['stray'])).toBe("unexpected argument 'stray': this command takes only options (see its --help)");
  });

  it('takes a whole number written in digits only, and says what it got otherwise', () => {
    expect(positiveInteger('limit', '0')).toBe(0);
    expect(positiveInteger('limit', '16')).toBe(16);
    expect(positiveInteger('limit', undefined)).toBeUndefined();
    for (const written of ['', ' ', '0x10', '1e0', '1.0', '-1', '+1', 'ten', '99999999999999999999']) {
      expect(() => positiveInteger('limit', written)).toThrow(`--limit must be a whole number ≥ 0, got '${written}'`);
    }
  });
});
