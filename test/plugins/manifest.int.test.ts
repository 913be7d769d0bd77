import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { Facility } from '../../actors/kernel/facilities.ts';
import { discoverPlugins, loadManifest, ManifestInvalid, parseManifest } from '../../plugins/host/manifest.ts';
import { MOST_PROFILES } from '../../plugins/host/manifestProfiles.ts';
import { PLUGIN_CAPABILITIES } from '../../plugins/sdk/wireMethods.ts';
import { useTempDir } from '../support/tempDir.ts';

const WHERE = 'plugins/demo/plugin.json';
const minimal = { name: 'demo', version: '1.0.0', entry: 'main.lua' };

const refusal = (raw: unknown): ManifestInvalid => {
  try {
    parseManifest(raw, WHERE);
  } catch (error) {
    expect(error).toBeInstanceOf(ManifestInvalid);
    return error as ManifestInvalid;
  }
  throw new Error(`accepted ${JSON.stringify(raw)}`);
};

describe('parseManifest', () => {
  it('accepts a minimal manifest and fills in the defaults', () => {
    expect(parseManifest(minimal, WHERE)).toEqual({
      name: 'demo',
      version: '1.0.0',
      entry: 'main.lua',
      kind: 'lua',
      platforms: [],
      requires_facilities: [],
      capabilities: [],
      auto_start: true,
      auto_restart: true,
      env: [],
    });
  });

  it('takes "env" as a list of variable names, and refuses anything else with what a name must be', () => {
    expect(parseManifest({ ...minimal, env: ['WEATHER_CITY', 'WEATHER_CITY', '_X1'] }, WHERE).env).toEqual(['WEATHER_CITY', '_X1']);
    expect(refusal({ ...minimal, env: ['OK', '1BAD', 'A=B'] }).problems).toEqual([
      `"env"[1] must be a variable name (letters, digits, '_', not starting with a digit), not the string "1BAD"`,
      `"env"[2] must be a variable name (letters, digits, '_', not starting with a digit), not the string "A=B"`,
    ]);
    expect(refusal({ ...minimal, env: 'PATH' }).problems[0]).toContain('"env" must be an array of environment variable names');
  });

  it('keeps every field it was given; a non-.lua entry is a subprocess plugin', () => {
    const manifest = parseManifest(
      {
        ...minimal,
        entry: 'bin/plugin.js',
        platforms: ['linux', 'darwin'],
        requires_facilities: [Facility.llm, Facility.scheduler],
        capabilities: ['tools', 'subscribe'],
        auto_start: false,
        auto_restart: false,
        description: 'a demo',
      },
      WHERE,
    );
    expect(manifest).toMatchObject({
      kind: 'subprocess',
      platforms: ['linux', 'darwin'],
      requires_facilities: ['llm', 'scheduler'],
      capabilities: ['tools', 'subscribe'],
      auto_start: false,
      auto_restart: false,
      description: 'a demo',
    });
  });

  it('refuses a misspelled facility, suggesting the right one and listing the valid ones', () => {
    const error = refusal({ ...minimal, requires_facilities: ['schedular'] });
    expect(error.code).toBe('MANIFEST_INVALID');
    expect(error.message.startsWith(WHERE)).toBe(true);
    expect(error.message).toContain('"schedular"');
    expect(error.message).toContain('did you mean "scheduler"?');
    for (const facility of Object.values(Facility)) expect(error.message).toContain(facility);
  });

  it("refuses a principal's name as a plugin's, so no plugin's input speaks as the owner or the kernel", () => {
    for (const name of ['owner', 'internal']) {
      expect(refusal({ ...minimal, name }).message).toContain(`"name" "${name}" is the name of a principal`);
    }
    expect(parseManifest({ ...minimal, name: 'owners' }, WHERE).name).toBe('owners');
  });

  // A red team declared twelve profiles so that its guests, bounded per principal, piled up twelve times as much.
  it('refuses more profiles than a plugin needs', () => {
    const profiles = (n: number) => Object.fromEntries(Array.from({ length: n }, (_, i) => [`${minimal.name}.p${i}`, {}]));
    expect(Object.keys(parseManifest({ ...minimal, profiles: profiles(MOST_PROFILES) }, WHERE).profiles ?? {})).toHaveLength(MOST_PROFILES);
    expect(refusal({ ...minimal, profiles: profiles(MOST_PROFILES + 1) }).message).toContain(
      `"profiles" declares ${MOST_PROFILES + 1} profiles; a plugin declares at most ${MOST_PROFILES}`,
    );
  });

  it('offers no suggestion when nothing is close', () => {
    const error = refusal({ ...minimal, requires_facilities: ['telepathy'] });
    expect(error.message).toContain('"telepathy"');
    expect(error.message).not.toContain('did you mean');
  });

  it('refuses an unknown capability the same way', () => {
    const error = refusal({ ...minimal, capabilities: ['tools', 'tool'] });
    expect(error.problems).toHaveLength(1);
    expect(error.message).toContain('unknown capability "tool" (did you mean "tools"?)');
    for (const capability of PLUGIN_CAPABILITIES) expect(error.message).toContain(capability);
  });

  it('refuses an unknown key rather than ignoring it', () => {
    const error = refusal({ ...minimal, auto_strat: false });
    expect(error.message).toContain('unknown key "auto_strat" (did you mean "auto_start"?)');
    expect(error.message).toContain('known keys: name, version, entry');
  });

  it.each([
    ['uppercase', 'Demo'],
    ['a space', 'my plugin'],
    ['a leading digit', '1demo'],
    ['over 40 characters', 'a'.repeat(41)],
    ['empty', ''],
  ])('refuses a name with %s', (_, name) => {
    expect(refusal({ ...minimal, name }).message).toContain('"name"');
  });

  it.each(['../outside.lua', 'lib/../../x.js', '/usr/bin/node', 'C:\\plugins\\x.exe'])('refuses the entry %s', (entry) => {
    expect(refusal({ ...minimal, entry }).message).toContain('"entry"');
  });

  it('reports every problem at once', () => {
    const error = refusal({ name: 'Bad Name', entry: '../x.lua', capabilities: ['telepathy'], auto_start: 'yes', colour: 'red' });
    expect(error.problems).toHaveLength(6);
    const message = error.message;
    for (const part of ['"colour"', '"name"', '"version" is missing', '"entry"', '"telepathy"', '"auto_start"']) {
      expect(message).toContain(part);
    }
  });

  it("keeps a Lua plugin's limits, and refuses bad ones, unknown ones, and limits on a subprocess plugin", () => {
    expect(parseManifest({ ...minimal, limits: { memory_mb: 16, instructions: 500_000, time_ms: 250 } }, WHERE).limits).toEqual({
      memory_mb: 16,
      instructions: 500_000,
      time_ms: 250,
    });
    expect(refusal({ ...minimal, limits: { time_ms: 5 } }).message).toContain('"limits.time_ms" must be a whole number from 10 to 600000');
    expect(parseManifest(minimal, WHERE)).not.toHaveProperty('limits');
    expect(refusal({ ...minimal, limits: { memory_mb: 0 } }).message).toContain('"limits.memory_mb" must be a whole number from 1 to 4096');
    expect(refusal({ ...minimal, limits: { memory_mb: '64' } }).message).toContain('not "64"');
    expect(refusal({ ...minimal, limits: { memory: 64 } }).message).toContain(
      'unknown key "memory"; known keys: memory_mb, instructions, time_ms',
    );
    expect(refusal({ ...minimal, limits: 64 }).message).toContain('"limits" must be an object');
    expect(refusal({ ...minimal, entry: 'main.ts', limits: { memory_mb: 64 } }).message).toContain('applies to Lua plugins only');
  });

  it.each([null, [], 'demo', 3])('refuses %j as a manifest', (raw) => {
    expect(refusal(raw).message).toContain('must be a JSON object');
  });
});

describe('loadManifest', () => {
  const tempDir = useTempDir();

  it('reads plugin.json and checks that the entry exists', () => {
    const dir = tempDir();
    writeFileSync(join(dir, 'plugin.json'), JSON.stringify(minimal));
    expect(() => loadManifest(dir)).toThrow(/"entry" "main.lua" names no file/);
    writeFileSync(join(dir, 'main.lua'), '');
    expect(loadManifest(dir).name).toBe('demo');
  });

  it('names the file when it is missing', () => {
    const dir = tempDir();
    expect(() => loadManifest(dir)).toThrow(ManifestInvalid);
    expect(() => loadManifest(dir)).toThrow(`${join(dir, 'plugin.json')}: invalid plugin manifest`);
    expect(() => loadManifest(dir)).toThrow(/file not found/);
  });

  it('names the line and column of a JSON syntax error', () => {
    const dir = tempDir();
    writeFileSync(join(dir, 'plugin.json'), '{\n  "name": "demo",\n  "version": ,\n}');
    expect(() => loadManifest(dir)).toThrow(/not valid JSON at line 3, column 14/);
  });
});

describe('discoverPlugins', () => {
  const tempDir = useTempDir();
  const addPlugin = (root: string, folder: string, manifest: unknown): string => {
    const dir = join(root, folder);
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'plugin.json'), JSON.stringify(manifest));
    writeFileSync(join(dir, 'main.lua'), '');
    return dir;
  };

  it('finds nothing when the plugins folder does not exist', () => {
    expect(discoverPlugins(join(tempDir(), 'absent'))).toEqual({ found: [], invalid: [], skipped: [] });
  });

  it('sorts subfolders into found, invalid (including a duplicate name) and skipped (other platform)', () => {
    const root = tempDir();
    const elsewhere = process.platform === 'aix' ? 'darwin' : 'aix';
    const alpha = addPlugin(root, 'alpha', minimal);
    const beta = addPlugin(root, 'beta', { ...minimal, version: '2.0.0' });
    const broken = addPlugin(root, 'broken', { ...minimal, name: 'broken', requires_facilities: ['llms'] });
    const foreign = addPlugin(root, 'foreign', { ...minimal, name: 'foreign', platforms: [elsewhere] });
    const local = addPlugin(root, 'local', { ...minimal, name: 'local', platforms: [process.platform] });
    writeFileSync(join(root, 'README.md'), 'not a plugin');
    mkdirSync(join(root, '.cache'));

    const { found, invalid, skipped } = discoverPlugins(root);

    expect(found.map((p) => [p.dir, p.manifest.name])).toEqual([
      [alpha, 'demo'],
      [local, 'local'],
    ]);
    expect(invalid.map((p) => p.dir)).toEqual([beta, broken]);
    const [duplicate, misspelled] = invalid;
    expect(duplicate?.error.message).toContain(alpha);
    expect(duplicate?.error.message).toContain(beta);
    expect(duplicate?.error.message).toContain('"demo" is already taken');
    expect(misspelled?.error.message).toContain('did you mean "llm"?');
    expect(skipped).toEqual([
      {
        dir: foreign,
        manifest: expect.objectContaining({ name: 'foreign' }),
        reason: `runs only on ${elsewhere}; this is ${process.platform}`,
      },
    ]);
  });

  it('lets plugins for different platforms share a name', () => {
    const root = tempDir();
    addPlugin(root, 'a-here', { ...minimal, platforms: ['linux'] });
    addPlugin(root, 'b-there', { ...minimal, platforms: ['win32'] });
    const { found, invalid, skipped } = discoverPlugins(root, { platform: 'win32' });
    expect(found.map((p) => p.dir)).toEqual([join(root, 'b-there')]);
    expect(invalid).toEqual([]);
    expect(skipped.map((p) => p.dir)).toEqual([join(root, 'a-here')]);
  });

  it('reports a folder without plugin.json as invalid', () => {
    const root = tempDir();
    mkdirSync(join(root, 'empty'));
    const { invalid } = discoverPlugins(root);
    expect(invalid.map((p) => p.error.message)).toEqual([expect.stringContaining('file not found')]);
  });
});
