import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { REDACTED, scrubSecret } from '../../adapters/llm/scrubSecret.ts';

describe('scrubSecret', () => {
  it('leaves no form of the key in any text around it', () => {
    fc.assert(
      fc.property(fc.string(), fc.string({ minLength: 6, maxLength: 60 }), fc.string(), (before, key, after) => {
        for (const form of [key, encodeURIComponent(key), Buffer.from(key).toString('base64').replace(/=+$/, '')]) {
          const scrubbed = scrubSecret(`${before}${form}${after}`, key);
          expect(scrubbed).not.toContain(key);
          expect(scrubbed).toContain(REDACTED);
        }
      }),
    );
  });

  it('finds the key in the forms the firewall scrub knows: hex, escaped in JSON, base64 alone', () => {
    const key = 'sk-"quoted"/key';
    for (const form of [Buffer.from(key).toString('hex'), JSON.stringify(key).slice(1, -1), Buffer.from(key).toString('base64')]) {
      expect(scrubSecret(`body: ${form}.`, key)).toBe(`body: ${REDACTED}.`);
    }
  });

  it('keeps text without the key as it is, and ignores keys too short to be told from words', () => {
    expect(scrubSecret('HTTP 401: invalid api key', 'sk-abcdef123')).toBe('HTTP 401: invalid api key');
    expect(scrubSecret('the key is abc', 'abc')).toBe('the key is abc');
    expect(scrubSecret('no key at all', undefined)).toBe('no key at all');
  });
});
