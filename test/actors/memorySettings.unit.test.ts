/** The memory settings of settings.json: defaults, and a clear error for a lexicon it does not have. */
import { describe, expect, it } from 'vitest';
import { memoryConfigFrom } from '../../actors/modules/memoryModule.ts';
import { InvalidSettings } from '../../actors/modules/config.ts';

describe('memory settings', () => {
  it('defaults to the WordNet lexicon and takes "none"', () => {
    expect(memoryConfigFrom({}).lexicon).toBe('wordnet');
    expect(memoryConfigFrom({ memory: { lexicon: 'none' } }).lexicon).toBe('none');
  });

  it('refuses an unknown lexicon, naming the setting and the choices', () => {
    expect(() => memoryConfigFrom({ memory: { lexicon: 'glove' } })).toThrow(InvalidSettings);
    expect(() => memoryConfigFrom({ memory: { lexicon: 'glove' } })).toThrow(
      'memory.lexicon is "glove"; use one of "wordnet", "none" in settings.json',
    );
  });
});
