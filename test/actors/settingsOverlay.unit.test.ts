/** Settings for one run (homed chat's flags) laid over settings.json: objects merge, the rest replaces. */
import { describe, expect, it } from 'vitest';
import { overlaySettings } from '../../actors/modules/config.ts';

describe('overlaySettings', () => {
  const file = {
    llm: { sources: [{ name: 'a', adapter: 'openai', baseUrl: 'http://a/v1' }], model: 'm', maxRounds: 4 },
    timeZone: 'UTC',
  };

  it('given an override of one key in an object, when laid over, then the object keeps its other keys', () => {
    expect(overlaySettings(file, { llm: { systemPrompt: 'You are Bea.' } })).toEqual({
      llm: { sources: file.llm.sources, model: 'm', maxRounds: 4, systemPrompt: 'You are Bea.' },
      timeZone: 'UTC',
    });
  });

  it('given a list or a value, when laid over, then it replaces what was there, and the file is untouched', () => {
    const sources = [{ name: 'b', adapter: 'ollama', baseUrl: 'http://b' }];
    const laid = overlaySettings(file, { llm: { sources, maxRounds: 2 }, timeZone: 'Europe/Paris' });
    expect(laid).toEqual({ llm: { sources, model: 'm', maxRounds: 2 }, timeZone: 'Europe/Paris' });
    expect(file.llm.sources[0]!.name).toBe('a');
    expect(file.llm.maxRounds).toBe(4);
  });

  it('given no overrides, when laid over, then the settings are the same', () => {
    expect(overlaySettings(file, {})).toEqual(file);
  });
});
