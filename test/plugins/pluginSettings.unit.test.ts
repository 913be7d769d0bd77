/** Settings as a plugin reads them: keys, tokens, secrets, passwords and URL credentials never reach it. */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isSecretName, pluginSetting, withoutSecrets } from '../../plugins/host/pluginSettings.ts';

const settings = {
  llm: {
    sources: [
      { name: 'openai', adapter: 'openai', baseUrl: 'https://api.openai.com/v1', model: 'gpt', apiKey: 'sk-inline' },
      {
        name: 'local',
        adapter: 'ollama',
        baseUrl: 'http://ada:hunter2@localhost:11434/?token=t0k&x=1',
        model: 'm',
        apiKeyEnv: 'LOCAL_KEY',
      },
    ],
  },
  weather: { city: 'Oslo', accessToken: 'tok', clientSecret: 'cs', password: 'pw', keyword: 'rain', monkey: 'yes' },
  files: { roots: ['/home/ada/notes'] },
};

describe('settings a plugin reads', () => {
  it("names secrets by their words, not by substrings: 'keyword' and 'monkey' are not keys", () => {
    for (const name of [
      'apiKey',
      'apiKeyEnv',
      'API_KEY',
      'accessToken',
      'clientSecret',
      'password',
      'db-passwd',
      'privateKey',
      'authorization',
    ])
      expect(isSecretName(name), name).toBe(true);
    for (const name of ['keyword', 'monkey', 'model', 'baseUrl', 'tokenizer', 'city']) expect(isSecretName(name), name).toBe(false);
  });

  it('gives the whole llm subtree without apiKey and apiKeyEnv, and without credentials in its URLs', () => {
    expect(pluginSetting(settings, 'llm')).toEqual({
      sources: [
        { name: 'openai', adapter: 'openai', baseUrl: 'https://api.openai.com/v1', model: 'gpt' },
        { name: 'local', adapter: 'ollama', baseUrl: 'http://localhost:11434/?x=1', model: 'm' },
      ],
    });
    expect(pluginSetting(settings, 'llm.sources.0.apiKey')).toBeUndefined();
    expect(pluginSetting(settings, 'llm.sources.1.model')).toBe('m');
    expect(pluginSetting(settings, 'weather')).toEqual({ city: 'Oslo', keyword: 'rain', monkey: 'yes' });
    expect(pluginSetting(settings, 'weather.password')).toBeUndefined();
    expect(pluginSetting(settings, 'files.roots')).toEqual(['/home/ada/notes']);
    expect(pluginSetting(settings, 'constructor')).toBeUndefined();
    expect(pluginSetting(settings, '__proto__')).toBeUndefined();
  });

  it('never hands out a value stored under a secret-named field, however deep', () => {
    const secretName = fc.constantFrom('apiKey', 'token', 'secret', 'password', 'authToken', 'PRIVATE_KEY');
    const tree = fc.letrec((tie) => ({
      node: fc.oneof(
        { depthSize: 'small' },
        fc.constant('plain'),
        fc.array(tie('node'), { maxLength: 3 }),
        fc.dictionary(fc.oneof(secretName, fc.constantFrom('name', 'model', 'list')), tie('node'), { maxKeys: 3 }),
      ),
    })).node;
    fc.assert(
      fc.property(
        tree,
        fc.string({ minLength: 6 }).map((s) => `SECRET-${s}`),
        (value, secret) => {
          const planted = { value, inner: { apiKey: secret, list: [{ token: secret }] } };
          expect(JSON.stringify(withoutSecrets(planted))).not.toContain('SECRET-');
        },
      ),
    );
  });
});
