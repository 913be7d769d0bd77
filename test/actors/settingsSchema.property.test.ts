/** The settings schema: random JSON never breaks the check, and every problem names a key the file has. */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { checkSettings } from '../../actors/settings/checkSettings.ts';
import { SETTINGS_SCHEMA } from '../../actors/settings/settingsSchema.ts';

/** Every dotted path the value holds (`a.b[0].c`), the value itself as ''. */
const pathsOf = (value: unknown, path = ''): string[] => {
  if (Array.isArray(value)) return [path, ...value.flatMap((item, i) => pathsOf(item, `${path}[${i}]`))];
  if (typeof value === 'object' && value !== null) {
    return [path, ...Object.entries(value).flatMap(([k, v]) => pathsOf(v, path ? `${path}.${k}` : k))];
  }
  return [path];
};

const known = ['llm', 'timeZone', 'scheduler', 'projections', 'memory', 'plugins'];
/** JSON shaped like settings: known top-level keys (and typos of them) over arbitrary JSON. */
const settingsLike = fc.dictionary(
  fc.oneof(fc.constantFrom(...known), fc.constantFrom('lm', 'memroy', 'Scheduler'), fc.string()),
  fc.oneof(
    fc.jsonValue(),
    fc.record({
      sources: fc.array(
        fc.dictionary(fc.constantFrom('name', 'adapter', 'baseUrl', 'model', 'apiKey', 'contextWindow', 'x'), fc.jsonValue()),
      ),
    }),
    fc.dictionary(fc.constantFrom('protectRecent', 'keepTopK', 'budgetTokens', 'lexicon', 'heartbeats', 'files', 'inline'), fc.jsonValue()),
  ),
);

describe('checkSettings (property)', () => {
  it('never throws, and names only keys the settings have', () => {
    fc.assert(
      fc.property(fc.oneof(settingsLike, fc.jsonValue()), (settings) => {
        const problems = checkSettings(settings, SETTINGS_SCHEMA);
        const paths = new Set(pathsOf(settings).map((p) => p || '(the file)'));
        for (const { key, problem } of problems) {
          expect(paths.has(key), `problem for '${key}', which the settings do not have`).toBe(true);
          expect(problem.length).toBeGreaterThan(0);
        }
        if (typeof settings !== 'object' || settings === null || Array.isArray(settings)) expect(problems).toHaveLength(1);
      }),
      { numRuns: 500 },
    );
  });
});

describe('checkSettings', () => {
  it('accepts the README example and an empty file', () => {
    const example = {
      llm: {
        sources: [
          { name: 'local', adapter: 'openai', baseUrl: 'http://127.0.0.1:8000/v1', model: 'qwen2.5-7b', contextWindow: 32768 },
          { name: 'cloud', adapter: 'anthropic', baseUrl: 'https://api.anthropic.com', model: 'c', apiKeyEnv: 'ANTHROPIC_API_KEY' },
        ],
        maxRounds: 8,
      },
      timeZone: 'Europe/Paris',
      scheduler: { preemptCooldownMs: 2000, offloadAfterMs: 300000 },
      projections: { inline: ['kernel', 'scheduler'] },
      memory: { protectRecent: 10, keepTopK: 20, lexicon: 'wordnet', heartbeats: { rulesMinutes: 10 }, embedding: { onnxDir: 'models/m' } },
      plugins: { files: { roots: ['/home/me/notes'] }, myplugin: { anything: [1, 2] } },
    };
    expect(checkSettings(example, SETTINGS_SCHEMA)).toEqual([]);
    expect(checkSettings({}, SETTINGS_SCHEMA)).toEqual([]);
  });

  it('lists every problem at once, each with its key, and suggests the name meant', () => {
    const problems = checkSettings(
      {
        memroy: { keepTopK: 3 },
        llm: { maxRounds: 0, sources: [{ adapter: 'opnai', baseUrl: 'http://u:p@h/v1', contextWindow: 1.5 }] },
        memory: { keepTopk: 3, heartbeats: { mergeMinutes: 0 } },
        scheduler: 'fast',
        timeZone: 'Mars/Olympus',
        plugins: { files: { roots: [] } },
      },
      SETTINGS_SCHEMA,
    );
    expect(problems).toEqual([
      { key: 'memroy', problem: 'is not a setting; did you mean memory?' },
      { key: 'llm.maxRounds', problem: 'must be at least 1, got 0 (a whole number from 1 to 1000)' },
      { key: 'llm.sources[0].adapter', problem: expect.stringContaining('did you mean "openai"?') },
      { key: 'llm.sources[0].baseUrl', problem: expect.stringContaining('carries credentials') },
      { key: 'llm.sources[0].contextWindow', problem: 'must be a whole number, got 1.5' },
      { key: 'memory.keepTopk', problem: 'is not a setting; did you mean memory.keepTopK?' },
      { key: 'memory.heartbeats.mergeMinutes', problem: 'must be at least 0.01, got 0' },
      { key: 'scheduler', problem: 'must be an object, got string' },
      { key: 'timeZone', problem: expect.stringContaining('not an IANA time zone') },
      { key: 'plugins.files.roots', problem: 'must not be an empty list' },
    ]);
    expect(JSON.stringify(problems)).not.toContain('u:p@');
  });

  it("refuses keys named like Object's own properties (__proto__, constructor) as any unknown key", () => {
    const settings = JSON.parse('{"__proto__": {"timeZone": "Mars/Phobos"}, "constructor": 1, "llm": {"__proto__": {"maxRounds": -1}}}');
    expect(checkSettings(settings, SETTINGS_SCHEMA).map((p) => `${p.key}: ${p.problem.split(';')[0]}`)).toEqual([
      '__proto__: is not a setting',
      'constructor: is not a setting',
      'llm.__proto__: is not a setting',
    ]);
  });

  it('suggests a name only when one is close', () => {
    expect(checkSettings({ memory: { zzzzzz: 1 } }, SETTINGS_SCHEMA)).toEqual([{ key: 'memory.zzzzzz', problem: 'is not a setting' }]);
  });

  // A deny rule with a trailing space started the daemon and denied nothing (found by the hostile tester).
  it('refuses a tool rule that could name no tool, at every level, and takes names and globs', () => {
    const problems = checkSettings(
      {
        security: {
          tools: { deny: ['files_write ', 'shell_*'], allow: ['files read'] },
          principals: { 'qq.guest': { approve: ['web/fetch'] } },
        },
      },
      SETTINGS_SCHEMA,
    );
    expect(problems.map((p) => p.key).sort()).toEqual([
      'security.principals.qq.guest.approve[0]',
      'security.tools.allow[0]',
      'security.tools.deny[0]',
    ]);
    for (const { problem } of problems) expect(problem).toContain("names no tool: a tool's name is letters, digits, '_' and '-'");
    expect(checkSettings({ security: { tools: { deny: ['files_*', 'web-get', 'x?', 'GH_Create'] } } }, SETTINGS_SCHEMA)).toEqual([]);
  });

  // An unparsable baseUrl was quoted whole, password and all (found by the hostile tester).
  it('quotes a baseUrl that is not a URL without what could be credentials in it', () => {
    const problems = checkSettings(
      {
        llm: {
          sources: [
            { name: 'a', adapter: 'openai', model: 'm', baseUrl: 'https://ada:hunter2-pass@api.exa mple.com/v1' },
            { name: 'b', adapter: 'openai', model: 'm', baseUrl: 'http://h st/v1?key=sk-in-query-1' },
          ],
        },
      },
      SETTINGS_SCHEMA,
    );
    expect(problems.map((p) => p.problem)).toEqual([
      expect.stringContaining("baseUrl 'https://…@api.exa mple.com/v1' is not a URL"),
      expect.stringContaining("baseUrl 'http://h st/v1?…' is not a URL"),
    ]);
    expect(JSON.stringify(problems)).not.toMatch(/hunter2|ada:|sk-in-query/);
  });

  // Found by the hostile tester: a source without its adapter or server was saved, and only the next start refused it.
  it('refuses a model source without its adapter or server, with several keys, or named as another is', () => {
    const sources = (...list: Record<string, unknown>[]) => checkSettings({ llm: { sources: list } }, SETTINGS_SCHEMA);
    const server = { adapter: 'openai', baseUrl: 'http://127.0.0.1:8000/v1' };
    expect(sources({ name: 'x', adapter: 'openai', model: 'm' }, {})).toEqual([
      { key: 'llm.sources[0]', problem: expect.stringMatching(/^needs baseUrl: the server/) },
      { key: 'llm.sources[1]', problem: expect.stringMatching(/^needs adapter: the wire protocol/) },
      { key: 'llm.sources[1]', problem: expect.stringMatching(/^needs baseUrl: /) },
    ]);
    expect(sources({ ...server, apiKey: 'abcd1234', apiKeyEnv: 'UNSET', apiKeySecret: 'NOPE' })).toEqual([
      {
        key: 'llm.sources[0]',
        problem: 'gives apiKey and apiKeySecret and apiKeyEnv: they say the same thing, and only one is read; keep one',
      },
    ]);
    expect(sources({ ...server, name: 'a' }, { ...server, name: 'b' }, { ...server, name: 'a' })).toEqual([
      { key: 'llm.sources[2].name', problem: 'is "a" as llm.sources[0].name is; give each its own' },
    ]);
    expect(sources({ ...server, name: 'a', apiKeySecret: 'KEY' }, { ...server, apiKeyEnv: 'KEY' }, server)).toEqual([]);
  });

  it('refuses a web UI port outside 0–65535, or a host that is no address, naming the key and what fits', () => {
    const webui = (settings: Record<string, unknown>) => checkSettings({ plugins: { webui: settings } }, SETTINGS_SCHEMA);
    expect(webui({ port: 70000 })).toEqual([
      { key: 'plugins.webui.port', problem: 'must be at most 65535, got 70000 (a whole number from 0 to 65535)' },
    ]);
    expect(webui({ port: -1 })).toEqual([
      { key: 'plugins.webui.port', problem: 'must be at least 0, got -1 (a whole number from 0 to 65535)' },
    ]);
    expect(webui({ port: 'eighty' })).toEqual([{ key: 'plugins.webui.port', problem: 'must be a number, got "eighty"' }]);
    expect(webui({ host: 'my host/x' })).toEqual([
      { key: 'plugins.webui.host', problem: expect.stringContaining('is not an address to listen on') },
    ]);
    expect(webui({ prot: 8080 })).toEqual([{ key: 'plugins.webui.prot', problem: 'is not a setting; did you mean plugins.webui.port?' }]);
    expect(webui({ port: 0, host: '0.0.0.0' })).toEqual([]);
    expect(webui({ port: 65535, host: '[::1]' })).toEqual([]);
  });

  it('refuses a projection name this build does not have, listing the names it has', () => {
    expect(checkSettings({ projections: { inline: ['kernel', 'kernal', 'nothing'] } }, SETTINGS_SCHEMA)).toEqual([
      {
        key: 'projections.inline[1]',
        problem: expect.stringMatching(
          /^must be one of "kernel", "scheduler", .*"memory_heartbeats", got "kernal"; did you mean "kernel"\?$/,
        ),
      },
      { key: 'projections.inline[2]', problem: expect.stringMatching(/^must be one of "kernel", .*, got "nothing"$/) },
    ]);
  });

  // A hostile tester wrote "block": true (every rule) and read only 'must be a list, got boolean'.
  it('says which values a list of names takes when it is given something else', () => {
    expect(checkSettings({ security: { review: { block: true } } }, SETTINGS_SCHEMA)).toEqual([
      {
        key: 'security.review.block',
        problem:
          'must be a list of "sensitive_word", "injection.instruction", "injection.hidden_text", "injection.reveal_secret", got boolean (list every one for all)',
      },
    ]);
  });

  it("says where a plugin's settings go when they are written at the top", () => {
    expect(checkSettings({ webui: { port: 9000 } }, SETTINGS_SCHEMA)).toEqual([
      { key: 'webui', problem: "is not a setting; a plugin's settings go under plugins.webui" },
    ]);
    expect(checkSettings({ webui: 9000 }, SETTINGS_SCHEMA)).toEqual([{ key: 'webui', problem: 'is not a setting' }]);
    expect(checkSettings({ 'webui.port': 9000, 'memory.keepTopK': 5 }, SETTINGS_SCHEMA)).toEqual([
      { key: 'webui.port', problem: 'is not a setting; settings.json nests its keys: write {"plugins": {"webui": {"port": …}}}' },
      { key: 'memory.keepTopK', problem: 'is not a setting; settings.json nests its keys: write {"memory": {"keepTopK": …}}' },
    ]);
  });
});
