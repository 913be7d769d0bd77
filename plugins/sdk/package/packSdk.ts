/**
 * Packs the plugin SDK as a publishable npm package folder: one ESM bundle of
 * `plugins/sdk/index.ts` (msgpackr left external), a package.json made from
 * `plugins/sdk/package/package.template.json` with the repo's version, license and msgpackr
 * range, the SDK README and `plugins/PROTOCOL.md`. The output folder is replaced whole.
 *
 * @example node --import tsx plugins/sdk/package/packSdk.ts --out /tmp/plugin-sdk
 */
import { copyFileSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { isAbsolute, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build, type Plugin } from 'esbuild';

const REPO = fileURLToPath(new URL('../../../', import.meta.url));
const SDK_PACKAGE = join(REPO, 'plugins/sdk/package');
const DEFAULT_OUT = 'dist/plugin-sdk';

type PackageJson = Record<string, unknown> & {
  version?: string;
  license?: string;
  dependencies?: Record<string, string>;
};

const readJson = (path: string): PackageJson => JSON.parse(readFileSync(path, 'utf8')) as PackageJson;

/** `--out DIR` (relative to the current directory), else `dist/plugin-sdk` in the repo. */
export const outDirFrom = (argv: readonly string[]): string => {
  const at = argv.indexOf('--out');
  if (at < 0) return join(REPO, DEFAULT_OUT);
  const dir = argv[at + 1];
  if (dir === undefined || dir.startsWith('--')) throw new Error('--out needs a directory, e.g. --out dist/plugin-sdk');
  return isAbsolute(dir) ? dir : resolve(process.cwd(), dir);
};

/** The package.json of the packed SDK: the template, with what the repo decides filled in. */
export const sdkPackageJson = (template: PackageJson, repo: PackageJson): PackageJson => {
  const msgpackr = repo.dependencies?.msgpackr;
  if (!repo.version || !repo.license || !msgpackr) {
    throw new Error("the repo's package.json needs 'version', 'license' and a 'msgpackr' dependency to pack the SDK");
  }
  return { ...template, version: repo.version, license: repo.license, dependencies: { ...template.dependencies, msgpackr } };
};

/**
 * The SDK reaches the kernel's names through the actors' public surface (`actors/index.ts`),
 * which re-exports machines and projections a plugin never uses. Our sources only declare
 * things at their top level, so the bundle may drop every module it does not use; without
 * this, esbuild keeps them (and xstate) in case they had side effects.
 */
const repoSourcesArePure: Plugin = {
  name: 'repo-sources-are-pure',
  setup(bundle) {
    bundle.onResolve({ filter: /^\.{1,2}\// }, async ({ path, kind, resolveDir, importer, pluginData }) => {
      if (pluginData === repoSourcesArePure) return undefined;
      const resolved = await bundle.resolve(path, { kind, resolveDir, importer, pluginData: repoSourcesArePure });
      if (resolved.errors.length > 0) return { errors: resolved.errors };
      const ours = resolved.path.startsWith(REPO) && !resolved.path.includes('/node_modules/');
      return { path: resolved.path, ...(ours ? { sideEffects: false } : {}) };
    });
  },
};

/** Builds the package into `outDir`; returns the files written. */
export const packSdk = async (outDir: string): Promise<string[]> => {
  rmSync(outDir, { recursive: true, force: true });
  mkdirSync(outDir, { recursive: true });
  await build({
    entryPoints: [join(REPO, 'plugins/sdk/index.ts')],
    outfile: join(outDir, 'index.js'),
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    external: ['msgpackr'],
    legalComments: 'none',
    logLevel: 'warning',
    plugins: [repoSourcesArePure],
  });
  const pkg = sdkPackageJson(readJson(join(SDK_PACKAGE, 'package.template.json')), readJson(join(REPO, 'package.json')));
  writeFileSync(join(outDir, 'package.json'), `${JSON.stringify(pkg, null, 2)}\n`);
  copyFileSync(join(SDK_PACKAGE, 'README.md'), join(outDir, 'README.md'));
  copyFileSync(join(REPO, 'plugins/PROTOCOL.md'), join(outDir, 'PROTOCOL.md'));
  return ['index.js', 'package.json', 'README.md', 'PROTOCOL.md'].map((file) => join(outDir, file));
};

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  try {
    const outDir = outDirFrom(process.argv.slice(2));
    const files = await packSdk(outDir);
    process.stdout.write(`packed @hologram/plugin-sdk into ${outDir}:\n${files.map((f) => `  ${f}`).join('\n')}\n`);
  } catch (error) {
    process.stderr.write(`packSdk: ${(error as Error).message}\n`);
    process.exitCode = 1;
  }
}
