/**
 * A provider's words quoted in an error are cut without splitting a word: the tester's 500 whose
 * body put a key across the 300th character showed its first part in clear (no scrub finds part
 * of a key).
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { quotedPart } from '../../adapters/llm/quotedPart.ts';

const KEY = 'sk-proj-AbCdEfGhIjKlMnOpQrStUvWxYz0123456789';

describe('quotedPart', () => {
  it('leaves out a key the cut would split, whole', () => {
    for (const lead of [279, 290, 299, 300]) {
      const part = quotedPart(`${'x'.repeat(lead - 5)} key ${KEY} was invalid`, 300);
      expect(part.endsWith('…')).toBe(true);
      for (let cut = 4; cut < KEY.length; cut++) expect(part).not.toContain(KEY.slice(0, cut));
    }
    // Base64 and URL-encoded forms are words too.
    const b64 = Buffer.from(KEY).toString('base64');
    expect(quotedPart(`${'y'.repeat(280)} ${b64}`, 300)).toBe(`${'y'.repeat(280)} …`);
    expect(quotedPart(`${'y'.repeat(290)} ${encodeURIComponent('a b/c+d')}`, 300)).toBe(`${'y'.repeat(290)} …`);
    // The third tester's key had a '!' in it: any run without white space is one word.
    expect(quotedPart(`${'P'.repeat(280)} key=sk-AB12CD34EF!GH56IJ78KL90MN rest`, 300)).toBe(`${'P'.repeat(280)} …`);
  });

  it('is the text itself when short enough, else a prefix ending between words, marked', () => {
    fc.assert(
      fc.property(
        fc.string({ unit: fc.constantFrom('a', 'B', '9', '-', ' ', '/', ',', '\n', 'é'), maxLength: 60 }),
        fc.nat(40),
        (text, most) => {
          const part = quotedPart(text, most);
          if (text.length <= most) {
            expect(part).toBe(text);
            return;
          }
          expect(part.endsWith('…')).toBe(true);
          const kept = part.slice(0, -1);
          expect(text.startsWith(kept)).toBe(true);
          expect(kept.length).toBeLessThanOrEqual(most);
          // Never a word cut in two: at the cut, one side or the other is not part of a word.
          const word = /[\p{L}\p{N}+/=_\-.%~:]/u;
          expect(kept.length === 0 || !word.test(kept.at(-1)!) || !word.test(text[kept.length]!)).toBe(true);
        },
      ),
      { numRuns: 2_000 },
    );
  });
});
