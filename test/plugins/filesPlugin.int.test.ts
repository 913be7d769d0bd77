import { existsSync, linkSync, lstatSync, mkdirSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { VirtualClock } from '../../events/index.ts';
import { confinePath, filesPlugin, InvalidFilesRoots, PathOutsideRoots } from '../../plugins/builtin/files/index.ts';
import { createFakePluginApi, replyOf } from '../support/fakePluginApi.ts';
import { useTempDir } from '../support/tempDir.ts';
import { createManualTimers } from '../support/manualTimers.ts';

const tempDir = useTempDir();

/** A started files plugin over a fresh data dir, with a directory outside every root. */
const given = async (settings: Record<string, unknown> = {}) => {
  const dataDir = tempDir();
  const outside = tempDir();
  writeFileSync(join(outside, 'secret.txt'), 'outside secret');
  const api = createFakePluginApi('files', settings);
  const running = await filesPlugin.start(api, { dataDir, clock: new VirtualClock(), timers: createManualTimers() });
  const call = async (tool: string, args: Record<string, unknown>) => replyOf(await api.call(tool, args));
  return { dataDir, root: join(dataDir, 'files'), outside, api, running, call };
};

describe('files plugin: reading, writing, listing inside the root', () => {
  it('registers the three tools and creates the default root', async () => {
    const { api, root } = await given();
    expect([...api.tools.keys()]).toEqual(['files_read', 'files_write', 'files_list']);
    expect(existsSync(root)).toBe(true);
    expect(filesPlugin.manifest).toMatchObject({
      name: 'files',
      kind: 'builtin',
      entry: 'builtin:files',
      capabilities: ['tools', 'settings'],
    });
  });

  it('writes a file under missing parent directories and reads it back', async () => {
    const { call, root } = await given();
    const written = await call('files_write', { path: 'notes/2030/today.md', content: 'héllo\n' });
    expect(written.isError).toBe(false);
    expect(readFileSync(join(root, 'notes/2030/today.md'), 'utf8')).toBe('héllo\n');
    expect(await call('files_read', { path: 'notes/2030/today.md' })).toEqual({ content: 'héllo\n', isError: false });
    expect(readdirSync(join(root, 'notes/2030'))).toEqual(['today.md']); // no temp file left behind
  });

  it('appends, and replaces without append', async () => {
    const { call, root } = await given();
    await call('files_write', { path: 'log.txt', content: 'a' });
    await call('files_write', { path: 'log.txt', content: 'b', append: true });
    expect(readFileSync(join(root, 'log.txt'), 'utf8')).toBe('ab');
    await call('files_write', { path: 'log.txt', content: 'c' });
    expect(readFileSync(join(root, 'log.txt'), 'utf8')).toBe('c');
  });

  it('lists a directory: subdirectories with a slash, files with their size', async () => {
    const { call } = await given();
    await call('files_write', { path: 'b.txt', content: '12345' });
    await call('files_write', { path: 'a/inner.txt', content: 'x' });
    const listed = await call('files_list', {});
    expect(listed.isError).toBe(false);
    expect(listed.content.split('\n').slice(1)).toEqual(['a/', 'b.txt  (5 bytes)']);
    expect((await call('files_list', { path: 'a' })).content).toContain('inner.txt  (1 bytes)');
  });

  it('reads in pages, saying where it cut and how to go on', async () => {
    const { call } = await given();
    await call('files_write', { path: 'long.txt', content: 'abcdefghij' });
    const first = await call('files_read', { path: 'long.txt', limit: 4 });
    expect(first.content).toMatch(/^abcd\n\[truncated: showed bytes 0–4 of 10; call files_read with offset 4/);
    expect((await call('files_read', { path: 'long.txt', offset: 4, limit: 100 })).content).toBe('efghij');
  });

  it('does not cut a UTF-8 character in two at a page end', async () => {
    const { call } = await given();
    await call('files_write', { path: 'u.txt', content: 'aé' }); // 'é' is 2 bytes: a page of 2 would split it
    expect((await call('files_read', { path: 'u.txt', limit: 2 })).content).toMatch(/^a\n\[truncated: showed bytes 0–1 of 3/);
  });

  it('answers a missing file, a directory and bad arguments with an error result', async () => {
    const { call } = await given();
    expect(await call('files_read', { path: 'nope.txt' })).toMatchObject({
      isError: true,
      content: expect.stringContaining('does not exist'),
    });
    await call('files_write', { path: 'd/x.txt', content: '' });
    expect(await call('files_read', { path: 'd' })).toMatchObject({ isError: true, content: expect.stringContaining('is a directory') });
    expect(await call('files_read', {})).toMatchObject({ isError: true, content: expect.stringContaining("'path'") });
    expect(await call('files_write', { path: 'x' })).toMatchObject({ isError: true, content: expect.stringContaining("'content'") });
    expect(await call('files_read', { path: 'd/x.txt', offset: -1 })).toMatchObject({ isError: true });
  });
});

describe('files plugin: confinement to the roots', () => {
  it("refuses a relative path that climbs out with '..', naming the root", async () => {
    const { call, root, dataDir } = await given();
    const read = await call('files_read', { path: '../../etc/passwd' });
    expect(read.isError).toBe(true);
    expect(read.content).toContain(root);
    expect(read.content).toContain("climbs out with '..'");
    const write = await call('files_write', { path: 'a/../../escaped.txt', content: 'x' });
    expect(write.isError).toBe(true);
    expect(existsSync(join(dataDir, 'escaped.txt'))).toBe(false);
  });

  it('allows a .. that stays inside the root', async () => {
    const { call, root } = await given();
    expect((await call('files_write', { path: 'a/../b.txt', content: 'in' })).isError).toBe(false);
    expect(readFileSync(join(root, 'b.txt'), 'utf8')).toBe('in');
  });

  it('refuses an absolute path outside the roots and allows one inside', async () => {
    const { call, root, outside } = await given();
    expect(await call('files_read', { path: join(outside, 'secret.txt') })).toMatchObject({
      isError: true,
      content: expect.stringContaining('absolute path'),
    });
    expect((await call('files_write', { path: join(outside, 'new.txt'), content: 'x' })).isError).toBe(true);
    expect(existsSync(join(outside, 'new.txt'))).toBe(false);
    expect((await call('files_write', { path: join(root, 'abs.txt'), content: 'ok' })).isError).toBe(false);
  });

  it('refuses to read or write through a symlinked directory that points outside', async () => {
    const { call, root, outside } = await given();
    symlinkSync(outside, join(root, 'escape'));
    const read = await call('files_read', { path: 'escape/secret.txt' });
    expect(read).toMatchObject({ isError: true, content: expect.stringContaining('symlink') });
    expect(read.content).not.toContain('outside secret');
    expect((await call('files_write', { path: 'escape/planted.txt', content: 'x' })).isError).toBe(true);
    expect((await call('files_write', { path: 'escape/deeper/planted.txt', content: 'x' })).isError).toBe(true);
    expect(readdirSync(outside)).toEqual(['secret.txt']);
    expect((await call('files_list', { path: 'escape' })).isError).toBe(true);
  });

  it('refuses a write through a dangling symlink whose target would be outside', async () => {
    const { call, root, outside } = await given();
    symlinkSync(join(outside, 'not-yet.txt'), join(root, 'dangling'));
    expect((await call('files_write', { path: 'dangling', content: 'x' })).isError).toBe(true);
    expect(existsSync(join(outside, 'not-yet.txt'))).toBe(false);
  });

  it('allows a symlink inside the root that points inside it, writing to the real file', async () => {
    const { call, root } = await given();
    mkdirSync(join(root, 'real'));
    symlinkSync(join(root, 'real'), join(root, 'alias'));
    expect((await call('files_write', { path: 'alias/through.txt', content: 'via link' })).isError).toBe(false);
    expect(readFileSync(join(root, 'real/through.txt'), 'utf8')).toBe('via link');
    expect(await call('files_read', { path: 'alias/through.txt' })).toEqual({ content: 'via link', isError: false });
  });

  it('writes through a symlinked file inside the root to its target, keeping the link', async () => {
    const { call, root } = await given();
    writeFileSync(join(root, 'target.txt'), 'old');
    symlinkSync(join(root, 'target.txt'), join(root, 'link.txt'));
    expect((await call('files_write', { path: 'link.txt', content: 'new' })).isError).toBe(false);
    expect(readFileSync(join(root, 'target.txt'), 'utf8')).toBe('new');
    expect(lstatSync(join(root, 'link.txt')).isSymbolicLink()).toBe(true);
  });

  it('takes roots from the setting, relative ones from the data dir; relative paths go to the first', async () => {
    const second = tempDir();
    const { call, dataDir } = await given({ roots: ['work', second] });
    mkdirSync(join(dataDir, 'work'));
    expect((await call('files_write', { path: 'rel.txt', content: '1' })).isError).toBe(false);
    expect(readFileSync(join(dataDir, 'work/rel.txt'), 'utf8')).toBe('1');
    expect((await call('files_write', { path: join(second, 'abs.txt'), content: '2' })).isError).toBe(false);
    expect(readFileSync(join(second, 'abs.txt'), 'utf8')).toBe('2');
    const refused = await call('files_write', { path: join(dataDir, 'files', 'x.txt'), content: '3' });
    expect(refused.isError).toBe(true);
    expect(refused.content).toContain(second);
  });

  it('refuses to start on a roots setting that is not a non-empty list of paths', async () => {
    for (const roots of [[], 'files', [42]]) {
      const api = createFakePluginApi('files', { roots: roots });
      await expect(
        filesPlugin.start(api, { dataDir: tempDir(), clock: new VirtualClock(), timers: createManualTimers() }),
      ).rejects.toBeInstanceOf(InvalidFilesRoots);
    }
  });
});

describe('confinePath', () => {
  it('resolves a not-yet-existing path inside the root', async () => {
    const root = tempDir();
    const { real, lexical } = await confinePath('a/b/c.txt', [root]);
    expect(lexical).toBe(join(root, 'a/b/c.txt'));
    expect(real.endsWith(join('a', 'b', 'c.txt'))).toBe(true);
  });

  it('throws PathOutsideRoots with the code and the roots', async () => {
    const root = tempDir();
    const error = await confinePath('../x', [root]).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(PathOutsideRoots);
    expect(error).toMatchObject({ code: 'PATH_OUTSIDE_ROOTS', roots: [root] });
  });

  it('is not fooled by a sibling whose name starts with the root', async () => {
    const parent = tempDir();
    mkdirSync(join(parent, 'root'));
    await expect(confinePath(join(parent, 'root-evil', 'x'), [join(parent, 'root')])).rejects.toBeInstanceOf(PathOutsideRoots);
  });
});

describe("files plugin: the daemon's own files", () => {
  // With the data dir itself as a root, the proxy's check and this plugin's open were two looks at
  // a path another process could change in between (a directory swapped for a link to the data
  // dir): settings.json was read through it. The plugin now refuses them on the path it opens.
  it('refuses them even inside a root, through a link to the data dir, and by a hard link', async () => {
    // A root holding the data dir: only the files root inside it is open to the tools.
    const { call, dataDir } = await given({ roots: ['.'] });
    writeFileSync(join(dataDir, 'settings.json'), '{"password":"pw-9"}');
    mkdirSync(join(dataDir, 'secrets'));
    writeFileSync(join(dataDir, 'secrets', 'vault.json'), 'vault');
    mkdirSync(join(dataDir, 'state', 'webui'), { recursive: true });
    writeFileSync(join(dataDir, 'state', 'webui', 'token'), 'owner-token');
    mkdirSync(join(dataDir, 'files'));
    symlinkSync(dataDir, join(dataDir, 'files', 'sub'));
    // Hard links to a named file and to a file inside a named folder.
    linkSync(join(dataDir, 'settings.json'), join(dataDir, 'files', 'notes.txt'));
    linkSync(join(dataDir, 'secrets', 'vault.json'), join(dataDir, 'files', 'vj'));
    writeFileSync(join(dataDir, 'files', 'mine.txt'), 'mine');
    writeFileSync(join(dataDir, 'persona.md'), 'persona');
    for (const [tool, path] of [
      ['files_read', 'settings.json'],
      ['files_read', 'files/sub/settings.json'],
      ['files_read', 'secrets/vault.json'],
      ['files_list', 'secrets'],
      ['files_write', 'settings.json'],
      ['files_write', 'events.db'],
      ['files_read', 'state/webui/token'],
      ['files_write', 'plugins/evil/plugin.json'],
      ['files_write', 'persona.md'],
      ['files_list', '.'],
    ] as const) {
      const reply = await call(tool, { path, content: 'x' });
      expect(reply.isError, `${tool} ${path}`).toBe(true);
      expect(reply.content).toContain("is the daemon's own (its vault, settings, log, state or plugins), which no tool may touch");
    }
    for (const path of ['files/notes.txt', 'files/vj']) {
      expect((await call('files_read', { path })).content, path).toContain("is a hard link to a file that is the daemon's own");
    }
    expect((await call('files_read', { path: 'files/mine.txt' })).content).toBe('mine');
    expect(readFileSync(join(dataDir, 'settings.json'), 'utf8')).toBe('{"password":"pw-9"}');
    expect(readFileSync(join(dataDir, 'persona.md'), 'utf8')).toBe('persona');
    expect(existsSync(join(dataDir, 'events.db'))).toBe(false);
    expect(existsSync(join(dataDir, 'plugins'))).toBe(false);
  });
});
