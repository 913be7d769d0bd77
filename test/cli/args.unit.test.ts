/** A command line parseArgs refuses is said in one line a person reads: the closest option, or how to give a value. */
import { describe, expect, it } from 'vitest';
import { parse } from '../../cli/args.ts';

const OPTIONS = { data: { type: 'string' }, limit: { type: 'string' }, follow: { type: 'boolean' } } as const;

const refusal = (args: string[]): string => {
  try {
    parse(args, OPTIONS);
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
    expect(refusal(['--limit', '-1'])).toBe("--limit needs a value (one that starts with '-' is written --limit=-1)");
    expect(parse(['--limit=-1'], OPTIONS).values.limit).toBe('-1');
  });

  it('keeps one line of any other complaint', () => {
    expect(refusal(['stray'])).not.toContain('\n');
  });
});
