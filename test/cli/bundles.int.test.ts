/**
 * The bundle's build and its freshness check, on entries of their own in a temp dir: the build
 * refuses a bundle that would carry a package (naming the import chain) and writes nothing; the
 * check keeps a bundle whose inputs hold the same bytes whatever their mtimes, and drops it
 * when an input's bytes change, an input or the bundle is gone or replaced, or the manifest is
 * not one. homed's bundle loads packages from node_modules and keeps each source's own URL, so a
 * file read beside a source is found from the bundle.
 */
import { mkdirSync, readFileSync, rmSync, symlinkSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { BundleRefused, buildBundle } from '../../bin/build-bundles.js';
import { type BundleManifest, BUNDLES, freshBundle as freshBundleOf } from '../../bin/bundles.js';
import { finished, REPO, spawnNode } from '../support/processes.ts';
import { useTempDir } from '../support/tempDir.ts';

const tempDir = useTempDir();
const { file: BUNDLE_FILE, manifest: MANIFEST_FILE } = BUNDLES.waiter;
const freshBundle = (root: string) => freshBundleOf('waiter', root);
const buildWaiter = (options: { root: string; entry: string }) => buildBundle('waiter', options);

/** A root with an entry importing one module of its own, built; the files' mtimes set an hour back (not racy). */
const builtRoot = async (): Promise<string> => {
  const root = tempDir();
  mkdirSync(join(root, 'cli'));
  writeFileSync(join(root, 'cli/entry.ts'), "import { greeting } from './greeting.ts';\nconsole.log(greeting);\n");
  writeFileSync(join(root, 'cli/greeting.ts'), "export const greeting: string = 'hello';\n");
  const hourAgo = new Date(Date.now() - 3_600_000);
  for (const file of ['cli/entry.ts', 'cli/greeting.ts']) utimesSync(join(root, file), hourAgo, hourAgo);
  await buildWaiter({ root, entry: 'cli/entry.ts' });
  return root;
};

const manifestOf = (root: string): BundleManifest => JSON.parse(readFileSync(join(root, MANIFEST_FILE), 'utf8')) as BundleManifest;

describe('building the bundle', () => {
  it('refuses an entry that reaches better-sqlite3, names the chain, and writes nothing', async () => {
    const root = tempDir();
    writeFileSync(join(root, 'entry.ts'), `import { defaultDataDir } from '${REPO}cli/dataDir.ts';\nconsole.log(defaultDataDir());\n`);
    const built = buildWaiter({ root, entry: 'entry.ts' });
    await expect(built).rejects.toBeInstanceOf(BundleRefused);
    await expect(built).rejects.toThrow(/package better-sqlite3, imported by entry\.ts → \S*cli\/dataDir\.ts → \S*adapters\/sqlite\//);
    expect(() => readFileSync(join(root, BUNDLE_FILE))).toThrow();
    expect(() => readFileSync(join(root, MANIFEST_FILE))).toThrow();
  });

  it('records every input with the bytes that went in, and the build script itself', async () => {
    const root = await builtRoot();
    const manifest = manifestOf(root);
    const paths = manifest.inputs.map((input) => input.path);
    expect(paths).toEqual(expect.arrayContaining(['cli/entry.ts', 'cli/greeting.ts']));
    expect(paths.some((path) => path.endsWith('bin/build-bundles.js'))).toBe(true);
    const greeting = manifest.inputs.find((input) => input.path === 'cli/greeting.ts')!;
    expect(greeting.size).toBe(readFileSync(join(root, 'cli/greeting.ts')).byteLength);
    expect(greeting.mtimeMs, 'an hour old: trusted').not.toBeNull();
  });

  it('does not trust an mtime as recent as the build: that input is hashed on every check', async () => {
    const root = await builtRoot();
    writeFileSync(join(root, 'cli/greeting.ts'), "export const greeting: string = 'howdy';\n");
    await buildWaiter({ root, entry: 'cli/entry.ts' });
    expect(manifestOf(root).inputs.find((input) => input.path === 'cli/greeting.ts')?.mtimeMs).toBeNull();
    expect(await freshBundle(root)).toBeDefined();
  });
});

describe('a fresh bundle', () => {
  it('is the bundle right after the build, and stays it when only mtimes move (a checkout, a copy)', async () => {
    const root = await builtRoot();
    expect(await freshBundle(root)).toBe(pathToFileURL(join(root, BUNDLE_FILE)).href);
    utimesSync(join(root, 'cli/greeting.ts'), new Date(), new Date());
    expect(await freshBundle(root)).toBeDefined();
  });

  it('is stale once an input holds other bytes, of another size or the same', async () => {
    const root = await builtRoot();
    const greeting = join(root, 'cli/greeting.ts');
    writeFileSync(greeting, "export const greeting: string = 'HELLO';\n");
    expect(await freshBundle(root)).toBeUndefined();
    writeFileSync(greeting, "export const greeting: string = 'hi';\n");
    expect(await freshBundle(root)).toBeUndefined();
    writeFileSync(greeting, "export const greeting: string = 'hello';\n");
    expect(await freshBundle(root), 'the bytes it was built from, back').toBeDefined();
  });

  it('is stale when an input is gone, the bundle is replaced or gone, or the manifest is not one', async () => {
    const root = await builtRoot();
    rmSync(join(root, 'cli/greeting.ts'));
    expect(await freshBundle(root)).toBeUndefined();

    const replaced = await builtRoot();
    writeFileSync(join(replaced, BUNDLE_FILE), 'console.log("not the bundle");\n');
    expect(await freshBundle(replaced)).toBeUndefined();
    rmSync(join(replaced, BUNDLE_FILE));
    expect(await freshBundle(replaced)).toBeUndefined();

    for (const manifest of ['', '{"version": 1', '{"version": 2, "bundle": {}, "inputs": []}', 'null', '[]']) {
      const garbled = await builtRoot();
      writeFileSync(join(garbled, MANIFEST_FILE), manifest);
      expect(await freshBundle(garbled), manifest).toBeUndefined();
    }
    const empty = await builtRoot();
    writeFileSync(join(empty, MANIFEST_FILE), JSON.stringify({ ...manifestOf(empty), inputs: [] }));
    expect(await freshBundle(empty)).toBeUndefined();
  });
});

describe("homed's bundle", () => {
  it('loads packages from node_modules and reads the files beside a source as the source does', async () => {
    const root = tempDir();
    mkdirSync(join(root, 'adapters/deep'), { recursive: true });
    symlinkSync(join(REPO, 'node_modules'), join(root, 'node_modules'));
    writeFileSync(join(root, 'adapters/deep/beside.txt'), 'read beside its source');
    writeFileSync(
      join(root, 'adapters/deep/reader.ts'),
      "import { readFileSync } from 'node:fs';\nexport const beside = (): string => readFileSync(new URL('./beside.txt', import.meta.url), 'utf8');\n",
    );
    writeFileSync(
      join(root, 'entry.ts'),
      "import { pack, unpack } from 'msgpackr';\nimport { beside } from './adapters/deep/reader.ts';\nconsole.log(beside(), unpack(pack({ n: 1 })).n);\n",
    );
    await buildBundle('homed', { root, entry: 'entry.ts' });
    const bundle = readFileSync(join(root, BUNDLES.homed.file), 'utf8');
    expect(bundle, 'msgpackr stays a package import').toMatch(/from "msgpackr"/);
    const run = await finished(spawnNode([join(root, BUNDLES.homed.file)]));
    expect(run.stderr).toBe('');
    expect(run.stdout).toBe('read beside its source 1\n');
    expect(await freshBundleOf('homed', root)).toBe(pathToFileURL(join(root, BUNDLES.homed.file)).href);
  });
});
