/**
 * The string finder finds what looking for each string in turn finds: every place each starts,
 * overlapping ones too, whether it looks for them in turn (a few) or in one pass per length tier
 * (many), with strings that share how they begin and end, strings inside strings, strings of one
 * or two characters, Han characters and characters outside the BMP (two UTF-16 units).
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { type Found, LOOKED_FOR_IN_TURN, type Needles, StringFinder } from '../../machines/security/index.ts';

/** Every place each form starts in `text`, one form at a time: what the finder must equal. */
const eachInTurn = (forms: Needles, text: string): Found[] =>
  forms.flatMap(([name, form], rank) => {
    const found: Found[] = [];
    for (let at = text.indexOf(form); at >= 0; at = text.indexOf(form, at + 1))
      found.push({ start: at, end: at + form.length, name, rank });
    return found;
  });

const inOrder = (found: readonly Found[]): Found[] => [...found].sort((x, y) => x.start - y.start || x.rank - y.rank);

/** Strings over a small alphabet with shared beginnings and ends, so windows collide and strings overlap. */
const form = fc.oneof(
  fc.stringMatching(/^[ab]{1,30}$/),
  // A key outside the BMP is two UTF-16 units; a lone half of one is a unit too.
  fc.string({ unit: fc.constantFrom('a', 'b', '密', '码', '钥', '🔑', '\uD83D'), minLength: 1, maxLength: 6 }),
  fc.stringMatching(/^[abc]{0,6}$/).map((core) => `sk-proj-${core}-tail`),
  fc.stringMatching(/^[a-c]{1,20}$/).map((core) => `-----BEGIN KEY-----${core}-----END KEY-----`),
);

const formsAndText = fc
  .oneof(fc.uniqueArray(form, { minLength: 1, maxLength: 8 }), fc.uniqueArray(form, { minLength: LOOKED_FOR_IN_TURN + 1, maxLength: 120 }))
  .chain((values) =>
    fc.tuple(
      fc.constant(values.map((value, i) => [`S${i}`, value] as const)),
      fc
        .array(
          fc.oneof(
            fc.constantFrom(...values),
            fc.constantFrom(...values).chain((v) => fc.integer({ min: 0, max: v.length }).map((cut) => v.slice(cut))),
            fc.string({ unit: fc.constantFrom('a', 'b', 'c', '-', '密', '码', '🔑', '\uDD11'), maxLength: 8 }),
          ),
          { maxLength: 30 },
        )
        .map((parts) => parts.join('')),
    ),
  );

describe('the value finder', () => {
  it('finds every place each form starts, as looking for each in turn does, with few forms or many', () => {
    fc.assert(
      fc.property(formsAndText, fc.nat(10), ([forms, text], rankFrom) => {
        const found = new StringFinder(forms).find(text, [], rankFrom);
        const expected = eachInTurn(forms, text).map((f) => ({ ...f, rank: f.rank + rankFrom }));
        expect(inOrder(found)).toEqual(inOrder(expected));
      }),
      { numRuns: 300 },
    );
  });

  it('looks for many forms in one pass, and finds them all', () => {
    const forms: Needles = Array.from({ length: 2_000 }, (_, i) => [
      `KEY_${i}`,
      `sk-proj-${i.toString(36).padStart(6, '0')}-${'x'.repeat(i % 7)}`,
    ]);
    expect(forms.length).toBeGreaterThan(LOOKED_FOR_IN_TURN);
    const text = ['start ', forms[0]![1], ' and ', forms[1_999]![1], forms[777]![1], ' end', 'short'].join('');
    const found = new StringFinder(forms).find(text, []);
    expect(inOrder(found)).toEqual(inOrder(eachInTurn(forms, text)));
    expect(found.map((f) => f.name).sort()).toEqual(['KEY_0', 'KEY_1999', 'KEY_777']);
  });

  it('says where the first needle that has begun but not ended is, as trying each place against each needle does', () => {
    const openByTrying = (forms: Needles, text: string): number => {
      for (let at = 0; at < text.length; at++) {
        const tail = text.slice(at);
        if (forms.some(([, f]) => f.length > tail.length && f.startsWith(tail))) return at;
      }
      return text.length;
    };
    fc.assert(
      fc.property(formsAndText, fc.nat(), fc.nat(), ([forms, text], which, cut) => {
        // Most texts end in the start of a needle, as a stream cut at random does.
        const [, form] = forms[which % forms.length]!;
        const ending = text + form.slice(0, cut % (form.length + 1));
        expect(new StringFinder(forms).openFrom(ending)).toBe(openByTrying(forms, ending));
      }),
      { numRuns: 500 },
    );
    // Prefixes, not the needles' ends: a text ending in the start of one holds from there.
    const finder = new StringFinder([['K', 'sk-proj-abc']]);
    expect(finder.openFrom('key sk-pr')).toBe(4);
    expect(finder.openFrom('key sk-proj-abc')).toBe(15);
    expect(finder.openFrom('')).toBe(0);
  });
});
