/**
 * A fixture plugin of test/fixtures/plugins/host, bundled ahead of time with esbuild into one
 * `.mjs` that plain node runs: the same SDK and protocol in a real subprocess, without the
 * ~0.8 s tsx needs to load TypeScript at every start (a test that restarts a plugin often
 * pays it each time). msgpackr stays external and resolves through a `node_modules` next to
 * the bundles that is the repo's.
 */
import { mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { build } from 'esbuild';
import { REPO } from './processes.ts';

const FIXTURES = join(REPO, 'test/fixtures/plugins/host');

/** Bundles each named fixture into `<root>/<name>/` (main.mjs and its plugin.json); returns each plugin's folder. */
export const bundleFixturePlugins = async (root: string, names: readonly string[]): Promise<Record<string, string>> => {
  symlinkSync(join(REPO, 'node_modules'), join(root, 'node_modules'), 'dir');
  const dirs: Record<string, string> = {};
  for (const name of names) {
    const dir = join(root, name);
    mkdirSync(dir, { recursive: true });
    const manifest = JSON.parse(readFileSync(join(FIXTURES, name, 'plugin.json'), 'utf8')) as { entry: string };
    await build({
      entryPoints: [join(FIXTURES, name, manifest.entry)],
      outfile: join(dir, 'main.mjs'),
      bundle: true,
      platform: 'node',
      format: 'esm',
      target: 'node20',
      external: ['msgpackr'],
      logLevel: 'warning',
    });
    writeFileSync(join(dir, 'plugin.json'), JSON.stringify({ ...manifest, entry: 'main.mjs' }));
    dirs[name] = dir;
  }
  return dirs;
};
