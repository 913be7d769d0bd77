/**
 * The bundles a checkout starts from: dist/waiter.mjs and dist/homed.mjs (plain JavaScript,
 * built by bin/build-bundles.js from cli/waiter.ts, cli/homed.ts and every file each imports),
 * and dist/memory-scale.mjs, the memory-scale benchmark, which measures the memory's RSS as homed
 * runs it (through tsx, tsx's loader holds tens of MB more),
 * each with its manifest, dist/NAME.inputs.json, which names each of those files (and the bundle)
 * with the size, mtime and SHA-256 of the bytes that went into the bundle. A bundle is fresh only
 * while every input still has those bytes; an edit, a checkout or a deleted file makes it stale,
 * and bin/NAME.js then runs the sources through tsx, so nobody runs code older than the checkout.
 * The check is a stat per input (1-3 ms); only an input whose mtime moved (a checkout, a
 * copy) or was too recent at build time to tell a later edit apart is hashed (node:crypto and
 * the hashes cost 4-7 ms more).
 */
import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

/** The checkout (or installed package) this file belongs to. */
export const PACKAGE_ROOT = fileURLToPath(new URL('../', import.meta.url));

/**
 * @typedef {'waiter' | 'homed' | 'memory-scale'} BundleName
 * @typedef {{ entry: string, file: string, manifest: string, packages: 'refused' | 'external' }} BundleSpec
 *   packages 'refused': the bundle must start without any package (waiter starts without the
 *   daemon's SQLite and msgpack); 'external': packages stay in node_modules and load from there
 */

/** @type {Readonly<Record<BundleName, BundleSpec>>} */
export const BUNDLES = Object.freeze({
  waiter: { entry: 'cli/waiter.ts', file: 'dist/waiter.mjs', manifest: 'dist/waiter.inputs.json', packages: 'refused' },
  homed: { entry: 'cli/homed.ts', file: 'dist/homed.mjs', manifest: 'dist/homed.inputs.json', packages: 'external' },
  'memory-scale': {
    entry: 'bench/locomo/runMemoryScale.ts',
    file: 'dist/memory-scale.mjs',
    manifest: 'dist/memory-scale.inputs.json',
    packages: 'external',
  },
});

export const MANIFEST_VERSION = 1;

/**
 * An mtime this close to the moment it was read (or later) may be shared by an edit that comes
 * after it (file systems with 1 s or 2 s timestamps), so such an input is hashed on every check.
 */
export const RACY_MTIME_MS = 2000;

/**
 * @typedef {{ path: string, size: number, mtimeMs: number | null, sha256: string }} RecordedFile
 *   a file relative to the package root as it was built from (an input) or written (the bundle);
 *   mtimeMs null: too recent to trust, hash it on every check
 * @typedef {{ version: number, bundle: RecordedFile, inputs: RecordedFile[] }} BundleManifest
 */

/**
 * The bundle's file URL when it is there and was built from the sources as they are now;
 * undefined when it or its manifest is missing or unreadable, or it or any input changed.
 * @param {BundleName} name
 * @param {string} [root]
 * @returns {Promise<string | undefined>}
 */
export const freshBundle = async (name, root = PACKAGE_ROOT) => {
  const spec = BUNDLES[name];
  try {
    /** @type {BundleManifest} */
    const { version, bundle, inputs } = JSON.parse(readFileSync(join(root, spec.manifest), 'utf8'));
    if (version !== MANIFEST_VERSION || bundle?.path !== spec.file || !Array.isArray(inputs) || inputs.length === 0) return undefined;
    /** @type {RecordedFile[]} */
    const toHash = [];
    for (const file of [bundle, ...inputs]) {
      const now = statSync(join(root, file.path));
      if (now.size !== file.size) return undefined;
      if (file.mtimeMs === null || now.mtimeMs !== file.mtimeMs) toHash.push(file);
    }
    if (toHash.length > 0) {
      const { createHash } = await import('node:crypto');
      const sha256 = (/** @type {string} */ path) =>
        createHash('sha256')
          .update(readFileSync(join(root, path)))
          .digest('hex');
      if (toHash.some((file) => sha256(file.path) !== file.sha256)) return undefined;
    }
    return pathToFileURL(join(root, spec.file)).href;
  } catch {
    return undefined; // a file gone or unreadable, a manifest that is not JSON: stale
  }
};

/**
 * Runs bin/NAME.js's program: the bundle when fresh, else the sources through tsx.
 * @param {BundleName} name
 */
export const startFromBundle = async (name) => {
  const bundle = await freshBundle(name);
  if (bundle !== undefined) {
    await import(bundle);
  } else {
    const { register } = await import('tsx/esm/api');
    register();
    await import(pathToFileURL(join(PACKAGE_ROOT, BUNDLES[name].entry)).href);
  }
};
