/**
 * The packed SDK works outside the repo: `plugins/sdk/package/packSdk.ts` builds the package, and a plain
 * `.mjs` plugin run with plain node (no tsx) imports it by path and speaks the real protocol.
 *
 * msgpackr (the package's one dependency) resolves because the packed folder sits in a temp dir
 * whose `node_modules` is a symlink to the repo's: node looks for bare imports in the
 * `node_modules` of every parent of the importing file. NODE_PATH would not do, since ESM
 * imports ignore it.
 */
import { existsSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { KernelMethod, PluginMethod, READY_NOTIFY } from '../../plugins/sdk/index.ts';
import { finished, REPO, spawnNode } from '../support/processes.ts';
import { childPeer, type PluginChild } from './pair.ts';
import { useTempDir } from '../support/tempDir.ts';

const tempDir = useTempDir();
const children: PluginChild[] = [];

afterEach(() => {
  for (const child of children.splice(0)) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
});

/** Packs the SDK into `<temp>/plugin-sdk`, next to a `node_modules` that is the repo's. */
const packSdk = async (): Promise<string> => {
  const root = tempDir();
  symlinkSync(join(REPO, 'node_modules'), join(root, 'node_modules'), 'dir');
  const out = join(root, 'plugin-sdk');
  const run = await finished(spawnNode(['--import', 'tsx', join(REPO, 'plugins/sdk/package/packSdk.ts'), '--out', out]));
  expect(run, run.stderr).toMatchObject({ code: 0 });
  return out;
};

const PLUGIN = (sdkUrl: string) => `
import { runPlugin } from ${JSON.stringify(sdkUrl)};

await runPlugin({ name: 'greeter', version: '2.0.0' }, async (api) => {
  await api.registerTool(
    { name: 'greeter_hello', description: 'Greets', parameters: { type: 'object', properties: { who: { type: 'string' } } } },
    (args, call) => ({ content: 'hello ' + args.who + ' (' + call.callId + ')' }),
  );
  api.log('greeter registered');
});
`;

describe('the packed plugin SDK', () => {
  it('is a package folder with the bundle, a filled-in package.json, the README and PROTOCOL.md', async () => {
    const out = await packSdk();
    for (const file of ['index.js', 'package.json', 'README.md', 'PROTOCOL.md']) expect(existsSync(join(out, file)), file).toBe(true);
    const repoPkg = JSON.parse(readFileSync(join(REPO, 'package.json'), 'utf8')) as {
      version: string;
      license: string;
      dependencies: { msgpackr: string };
    };
    expect(JSON.parse(readFileSync(join(out, 'package.json'), 'utf8'))).toMatchObject({
      name: '@hologram/plugin-sdk',
      version: repoPkg.version,
      license: repoPkg.license,
      type: 'module',
      main: './index.js',
      exports: { '.': './index.js' },
      dependencies: { msgpackr: repoPkg.dependencies.msgpackr },
    });
    const bundle = readFileSync(join(out, 'index.js'), 'utf8');
    expect(bundle).not.toMatch(/from ["']\.{1,2}\//);
    expect(bundle).not.toMatch(/\.ts["']/);
    // It reaches the kernel's names through actors/index.ts, yet carries none of the kernel behind it.
    expect(bundle).not.toMatch(/xstate|createMachine|\/\/ machines\//);
  });

  it('runs a plain-node plugin that says hello, registers a tool, says ready and answers a call', async () => {
    const out = await packSdk();
    const pluginDir = tempDir();
    writeFileSync(join(pluginDir, 'main.mjs'), PLUGIN(pathToFileURL(join(out, 'index.js')).href));
    const { child, connection, errors, exited, stderr } = childPeer(['main.mjs'], { cwd: pluginDir });
    children.push(child);

    const registered: { method: string; params: unknown }[] = [];
    connection.onRequest((method, params) => {
      registered.push({ method, params });
      return null;
    });
    const notes: { method: string; params: unknown }[] = [];
    const ready = new Promise<void>((resolve) =>
      connection.onNotify((method, params) => {
        notes.push({ method, params });
        if (method === READY_NOTIFY) resolve();
      }),
    );

    const hello = await connection.awaitHello({ timeoutMs: 20_000, capabilities: ['tools'] }).catch((e: unknown) => {
      throw new Error(`${String(e)}\nstderr: ${stderr()}`);
    });
    expect(hello).toMatchObject({ type: 'hello', protocol: 1, plugin: 'greeter', version: '2.0.0' });
    await ready;
    expect(registered).toEqual([
      {
        method: KernelMethod.registerTool,
        params: { name: 'greeter_hello', description: 'Greets', parameters: { type: 'object', properties: { who: { type: 'string' } } } },
      },
    ]);
    expect(notes).toEqual([
      { method: 'log', params: { line: 'greeter registered' } },
      { method: READY_NOTIFY, params: null },
    ]);

    const answer = await connection.request(
      PluginMethod.callTool,
      { name: 'greeter_hello', args: { who: 'kernel' }, callId: 'c-1' },
      { timeoutMs: 10_000 },
    );
    expect(answer).toEqual({ content: 'hello kernel (c-1)' });
    await expect(
      connection.request(PluginMethod.callTool, { name: 'nope', args: {}, callId: 'c-2' }, { timeoutMs: 10_000 }),
    ).rejects.toMatchObject({
      remoteCode: 'NO_SUCH_TOOL',
    });

    connection.close('test done');
    expect(await exited).toBe(0);
    expect(errors).toEqual([]);
    expect(stderr()).toBe('');
  });
});
