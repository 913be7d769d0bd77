/**
 * waiter's bundle: dist/waiter.mjs (plain JavaScript, built by bin/build-waiter.js from
 * cli/waiter.ts and every file it imports) and its manifest, dist/waiter.inputs.json, which
 * names each of those files (and the bundle) with the size, mtime and SHA-256 of the bytes that
 * went into the bundle. The bundle is fresh only while every input still has those bytes; an edit, a checkout
 * or a deleted file makes it stale, and waiter then runs the sources through tsx, so nobody runs
 * code older than the checkout.
 * The check is a stat per input (about 1 ms); only an input whose mtime moved (a checkout, a
 * copy) or was too recent at build time to tell a later edit apart is hashed (node:crypto and
 * the hashes cost 4-7 ms more).
 */
import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

/** The checkout (or installed package) this file belongs to. */
export const PACKAGE_ROOT = fileURLToPath(new URL('../', import.meta.url));

export const BUNDLE_FILE = 'dist/waiter.mjs';
export const MANIFEST_FILE = 'dist/waiter.inputs.json';
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
 * @typedef {{ version: number, bundle: RecordedFile, inputs: RecordedFile[] }} WaiterManifest
 */

/**
 * The bundle's file URL when it is there and was built from the sources as they are now;
 * undefined when it or its manifest is missing or unreadable, or it or any input changed.
 * @param {string} [root]
 * @returns {Promise<string | undefined>}
 */
export const freshBundle = async (root = PACKAGE_ROOT) => {
  try {
    /** @type {WaiterManifest} */
    const { version, bundle, inputs } = JSON.parse(readFileSync(join(root, MANIFEST_FILE), 'utf8'));
    if (version !== MANIFEST_VERSION || bundle?.path !== BUNDLE_FILE || !Array.isArray(inputs) || inputs.length === 0) return undefined;
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
    return pathToFileURL(join(root, BUNDLE_FILE)).href;
  } catch {
    return undefined; // a file gone or unreadable, a manifest that is not JSON: stale
  }
};
