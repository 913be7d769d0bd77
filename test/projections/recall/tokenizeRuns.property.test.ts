/**
 * The tokenizer's runs on text of any length: a run of millions of characters (a 10 MB message)
 * is one run, exactly as the unbounded pattern it replaces would cut it, with no stack overflow.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { tokenize } from '../../../actors/memory/lexicon.ts';
import { runsOf } from '../../../projections/memory/recall/lexical/tokenize.ts';

/** The unbounded pattern the tokenizer used to match: the reference for what a run is. */
const UNBOUNDED = /(\p{Script=Han}+)|((?:(?!\p{Script=Han})[\p{L}\p{M}\p{N}])+)/gu;
const reference = (text: string): [boolean, string][] =>
  [...text.matchAll(UNBOUNDED)].map((m) => [m[1] !== undefined, m[0]] as [boolean, string]);

const PIECES = ['a', 'Z', '9', 'é', '\u0301', '北', '京', ' ', ',', '-', '😀', 'ß', 'ǅ', '\u3000', '٣'];
/** Text made of runs, some far longer than the tokenizer's 4096-code-point pieces. */
const longRuns = fc
  .array(fc.tuple(fc.constantFrom(...PIECES), fc.integer({ min: 1, max: 9_000 })), { maxLength: 8 })
  .map((parts) => parts.map(([piece, times]) => piece.repeat(times)).join(''));

describe('tokenizer runs', () => {
  it('are the runs of the unbounded pattern, for runs longer than a piece too', () => {
    fc.assert(
      fc.property(fc.oneof(longRuns, fc.string({ unit: 'grapheme', maxLength: 200 })), (text) => {
        expect([...runsOf(text)]).toEqual(reference(text));
      }),
      { numRuns: Number(process.env.FC_RUNS ?? 200) },
    );
  });

  it('takes a 10 MB word and a 6 MB run of Chinese without overflowing the stack', () => {
    expect(tokenize('a'.repeat(10_000_000))).toEqual(['a'.repeat(10_000_000)]);
    expect(tokenize(`${'北京'.repeat(1_000_000)} ok`)).toContain('北京');
  });
});
