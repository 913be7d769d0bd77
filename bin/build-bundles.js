#!/usr/bin/env node
/**
 * `npm run build` (and `prepare`, which npm runs after `npm install` and `npm ci` in a checkout):
 * bundles cli/waiter.ts and cli/homed.ts, each with what it imports, into dist/waiter.mjs and
 * dist/homed.mjs with esbuild, and writes the manifests bin/waiter.js and bin/homed.js check them
 * against (see bundles.js). waiter's bundle holds only our own sources and imports only Node's
 * built-in modules: a package in it means an import chain reached the daemon's code (SQLite,
 * msgpack), so the build refuses it and names the chain. homed's bundle holds our sources and
 * loads the packages from node_modules. A source's `import.meta.url` still names the source's
 * own file, so files it reads beside itself (a Lua script, the web UI's page) are found.
 * Files are written to a temporary name and renamed, the manifest last, so a program starting
 * meanwhile sees the old bundle, the new one, or none, never half of one.
 */
import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, realpathSync, renameSync, statSync, writeFileSync } from 'node:fs';
import { isBuiltin } from 'node:module';
import { dirname, extname, join, relative } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { BUNDLES, MANIFEST_VERSION, PACKAGE_ROOT, RACY_MTIME_MS } from './bundles.js';

/** This script is an input too: a change to how the bundle is built makes the old one stale. */
const BUILD_SCRIPT = fileURLToPath(import.meta.url);

export class BundleRefused extends Error {
  code = 'BUNDLE_REFUSED';
}

/** @typedef {import('./bundles.js').RecordedFile} RecordedFile */

/**
 * A file as it is read now: stat first, then the bytes, so an edit in between leaves a recorded
 * mtime that no longer matches (and the check hashes the file) rather than one that hides it.
 * @param {string} root @param {string} path relative to root
 * @returns {{ input: RecordedFile, contents: Buffer }}
 */
const readInput = (root, path) => {
  const absolute = join(root, path);
  const { mtimeMs } = statSync(absolute);
  const readAt = Date.now();
  const contents = readFileSync(absolute);
  const sha256 = createHash('sha256').update(contents).digest('hex');
  return { input: { path, size: contents.byteLength, mtimeMs: readAt - mtimeMs >= RACY_MTIME_MS ? mtimeMs : null, sha256 }, contents };
};

const LOADERS = /** @type {const} */ ({ '.ts': 'ts', '.mts': 'ts', '.cts': 'ts', '.js': 'js', '.mjs': 'js', '.cjs': 'js' });

const IMPORT_META_URL = /\bimport\.meta\.url\b/g;

/**
 * A source's text with `import.meta.url` (which in the bundle would name the bundle) made the
 * source's own URL again, relative to the bundle, so the bundle can move with the checkout.
 * @param {Buffer} contents @param {string} source absolute @param {string} outfile absolute
 * @returns {Buffer | string}
 */
const keepOwnUrl = (contents, source, outfile) => {
  const text = contents.toString('utf8');
  if (!text.includes('import.meta.url')) return contents;
  const own = JSON.stringify(relative(dirname(outfile), source).split('\\').join('/'));
  return text.replace(IMPORT_META_URL, `new URL(${own}, import.meta.url).href`);
};

/**
 * An esbuild plugin that loads every source itself and records it, so the manifest describes
 * exactly the bytes the bundle was made of, even when a file is saved during the build.
 * @param {string} root @param {string} outfile @param {Map<string, RecordedFile>} recorded by path relative to root
 * @returns {import('esbuild').Plugin}
 */
const recordInputs = (root, outfile, recorded) => ({
  name: 'record-inputs',
  setup(build) {
    build.onLoad({ filter: /\.[cm]?[jt]s$/ }, (args) => {
      const loader = LOADERS[/** @type {keyof typeof LOADERS} */ (extname(args.path))];
      if (args.namespace !== 'file' || loader === undefined) return undefined;
      const { input, contents } = readInput(root, relative(root, args.path));
      recorded.set(input.path, input);
      return { contents: keepOwnUrl(contents, args.path, outfile), loader };
    });
  },
});

/** @param {string} path an esbuild input path @returns {string | undefined} the package it is in */
const packageOf = (path) => {
  const at = path.lastIndexOf('node_modules/');
  if (at < 0) return undefined;
  const [scope, name] = path.slice(at + 'node_modules/'.length).split('/');
  return scope?.startsWith('@') ? `${scope}/${name}` : scope;
};

/**
 * Each package our sources import, with the shortest chain of our files that reaches it, as
 * `entry → … → importer`: the chain to cut. Breadth first from the entry, never into a package.
 * @param {import('esbuild').Metafile} metafile @param {string} entry
 * @returns {Map<string, string>} package name → chain
 */
const packagesReached = (metafile, entry) => {
  /** @type {Map<string, string[]>} */
  const chains = new Map([[entry, [entry]]]);
  /** @type {Map<string, string>} */
  const packages = new Map();
  const queue = [entry];
  while (queue.length > 0) {
    const file = /** @type {string} */ (queue.shift());
    const chain = /** @type {string[]} */ (chains.get(file));
    for (const { path } of metafile.inputs[file]?.imports ?? []) {
      if (!(path in metafile.inputs)) continue; // external: a built-in
      const name = packageOf(path);
      if (name !== undefined) {
        if (!packages.has(name)) packages.set(name, chain.join(' → '));
      } else if (!chains.has(path)) {
        chains.set(path, [...chain, path]);
        queue.push(path);
      }
    }
  }
  return packages;
};

/**
 * What in a built bundle breaks the bundle's promise: esbuild's warnings (a require or import it
 * could not follow) and, for a bundle that refuses packages, packages inside it and imports at
 * run time of anything but a built-in.
 * @param {import('esbuild').BuildResult & { metafile: import('esbuild').Metafile }} result
 * @param {string} entry @param {import('./bundles.js').BundleSpec['packages']} packages
 * @returns {string[]}
 */
const problemsOf = (result, entry, packages) => {
  const warnings = result.warnings.map((w) => `esbuild warns: ${w.text}${w.location ? ` (${w.location.file}:${w.location.line})` : ''}`);
  if (packages === 'external') return warnings;
  const runtimeImports = Object.values(result.metafile.outputs).flatMap((output) =>
    output.imports.filter((i) => !isBuiltin(i.path)).map((i) => `${i.kind} '${i.path}'`),
  );
  return [
    ...[...packagesReached(result.metafile, entry)].map(([name, chain]) => `it would carry the package ${name}, imported by ${chain}`),
    ...warnings,
    ...runtimeImports.map((i) => `it would load ${i} at run time, which is not one of Node's built-in modules`),
  ];
};

/** @param {string} path @param {string | Uint8Array} contents */
const writeAtomically = (path, contents) => {
  const temporary = `${path}.${process.pid}.tmp`;
  writeFileSync(temporary, contents);
  renameSync(temporary, path);
};

/**
 * Builds the bundle `name` and its manifest under `root`.
 * @param {import('./bundles.js').BundleName} name
 * @param {{ root?: string, entry?: string }} [options] `entry` relative to root (tests bundle other entries)
 * @returns {Promise<{ bundle: string, bytes: number, inputs: number, ms: number }>}
 * @throws {BundleRefused} when esbuild warns, or a bundle that refuses packages would carry or load one
 */
export const buildBundle = async (name, { root = PACKAGE_ROOT, entry = BUNDLES[name].entry } = {}) => {
  const spec = BUNDLES[name];
  const started = performance.now();
  const esbuild = await import('esbuild');
  const outfile = join(root, spec.file);
  const script = readInput(root, relative(root, BUILD_SCRIPT)).input;
  /** @type {Map<string, RecordedFile>} */
  const recorded = new Map();
  const result = await esbuild.build({
    absWorkingDir: root,
    entryPoints: [entry],
    bundle: true,
    packages: spec.packages === 'external' ? 'external' : 'bundle',
    platform: 'node',
    format: 'esm',
    target: 'node20',
    outfile,
    sourcemap: 'linked',
    sourcesContent: false,
    legalComments: 'none',
    metafile: true,
    write: false,
    logLevel: 'silent',
    plugins: [recordInputs(root, outfile, recorded)],
  });
  const problems = problemsOf(result, entry, spec.packages);
  if (problems.length > 0) {
    const must =
      spec.packages === 'refused'
        ? `${name} must start without the daemon: move what it needs into a module that does not import that, and cut the chain.`
        : 'fix what esbuild says, then run npm run build again.';
    throw new BundleRefused(`${name}'s bundle (${entry}) was not written:\n${problems.map((p) => `  ${p}\n`).join('')}${must}`);
  }
  const code = result.outputFiles.find((file) => file.path === outfile);
  if (code === undefined) throw new Error(`esbuild wrote no ${outfile}`);
  mkdirSync(dirname(outfile), { recursive: true });
  for (const file of result.outputFiles) if (file !== code) writeAtomically(file.path, file.contents);
  writeAtomically(outfile, code.contents);
  // An input esbuild loaded itself (none today) is hashed now, and on every check.
  const inputs = [
    ...Object.keys(result.metafile.inputs).map((path) => recorded.get(path) ?? { ...readInput(root, path).input, mtimeMs: null }),
    script,
  ];
  // Only builds write the bundle, and each writes a manifest after it: its mtime needs no doubt.
  const { size, mtimeMs } = statSync(outfile);
  const bundle = { path: spec.file, size, mtimeMs, sha256: createHash('sha256').update(code.contents).digest('hex') };
  /** @type {import('./bundles.js').BundleManifest} */
  const manifest = { version: MANIFEST_VERSION, bundle, inputs };
  writeAtomically(join(root, spec.manifest), `${JSON.stringify(manifest, null, 2)}\n`);
  return { bundle: outfile, bytes: code.contents.byteLength, inputs: inputs.length, ms: performance.now() - started };
};

/** Builds every bundle (waiter's, homed's and the memory-scale benchmark's), one after the other. */
export const buildAll = async () => {
  const built = [];
  for (const name of /** @type {import('./bundles.js').BundleName[]} */ (Object.keys(BUNDLES))) built.push(await buildBundle(name));
  return built;
};

const isMain = process.argv[1] !== undefined && pathToFileURL(realpathSync(process.argv[1])).href === import.meta.url;
if (isMain) {
  try {
    for (const built of await buildAll()) {
      process.stdout.write(
        `built ${relative(process.cwd(), built.bundle)} (${(built.bytes / 1024).toFixed(1)} KiB from ${built.inputs} files) in ${Math.round(built.ms)} ms\n`,
      );
    }
  } catch (error) {
    // A refusal and esbuild's own errors (a syntax error, a missing export) say what is wrong; anything else is a bug.
    const failure = /** @type {Error & { errors?: unknown }} */ (error);
    const said = failure instanceof BundleRefused || Array.isArray(failure?.errors);
    process.stderr.write(`build-bundles: ${said ? failure.message : (failure?.stack ?? String(error))}\n`);
    process.exitCode = 1;
  }
}
