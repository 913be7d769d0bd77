/** The model sources' keys held outside the vault, with the names they are scrubbed as; a vault key is left to the vault. */
import { describe, expect, it } from 'vitest';
import { keysOutsideTheVault } from '../../actors/llm/llmSources.ts';
import { ALIAS } from '../../machines/security/index.ts';

describe('keys outside the vault', () => {
  it('names a variable key by its variable, a written key by its source, and skips the vault and unset variables', () => {
    const settings = {
      llm: {
        sources: [
          { name: 'local', adapter: 'openai', baseUrl: 'http://x/v1', apiKeyEnv: 'OPENAI_API_KEY' },
          { name: 'my cloud', adapter: 'openai', baseUrl: 'http://y/v1', apiKey: 'sk-written-1234' },
          { name: 'vaulted', adapter: 'openai', baseUrl: 'http://z/v1', apiKeySecret: 'VAULTED' },
          { name: 'lower', adapter: 'openai', baseUrl: 'http://w/v1', apiKeyEnv: '9weird-name' },
          { name: 'unset', adapter: 'openai', baseUrl: 'http://v/v1', apiKeyEnv: 'NOT_SET_HERE' },
        ],
      },
    };
    const keys = keysOutsideTheVault(settings, { OPENAI_API_KEY: 'sk-env-5678', '9weird-name': 'sk-odd-0000' });
    expect(keys).toEqual([
      { name: 'OPENAI_API_KEY', value: 'sk-env-5678' },
      { name: 'LLM_MY_CLOUD_KEY', value: 'sk-written-1234' },
      { name: 'KEY_9WEIRD_NAME', value: 'sk-odd-0000' },
    ]);
    // Each name is one an alias can carry.
    for (const { name } of keys) expect(`@{${name}}`).toMatch(new RegExp(`^${ALIAS.source}$`));
  });
});
