/** Whether a secret is easy enough to guess that the scrub could confirm a guess. */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { GUESSABLE_BELOW_BITS, guessableWarning, guessBits } from '../../adapters/secrets/guessableSecret.ts';

describe('guessBits', () => {
  it('warns for PINs and short words, not for keys and long passwords', () => {
    for (const value of ['4821', '12345678', 'hunter', 'k3y!']) expect(guessableWarning('X', value), value).toContain('easy to guess');
    for (const value of ['sk-live-4f9a77c2e1', 'ghp_0123456789abcdefABCD', 'correct horse battery staple']) {
      expect(guessableWarning('X', value), value).toBeUndefined();
    }
  });

  it('never falls as a value grows, nor as it draws on more kinds of character', () => {
    fc.assert(
      fc.property(fc.string({ minLength: 4, maxLength: 40 }), fc.string({ maxLength: 10 }), (value, more) => {
        expect(guessBits(value + more)).toBeGreaterThanOrEqual(guessBits(value));
      }),
    );
    expect(guessBits('a'.repeat(8))).toBeLessThan(GUESSABLE_BELOW_BITS);
    expect(guessBits('aA1!aA1!')).toBeGreaterThanOrEqual(GUESSABLE_BELOW_BITS);
  });
});
