/**
 * Which data dir a command uses when given no --data: `$HOLOGRAM_DATA`, else `.hologram/` under
 * PACKAGE_ROOT. Free of the event log, so waiter's bundle stays small; the path is relative to
 * this module's URL, and the bundle (dist/waiter.mjs) sits at the same depth, so it resolves alike.
 */
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const PACKAGE_ROOT = fileURLToPath(new URL('../', import.meta.url));

export const defaultDataDir = (): string => process.env.HOLOGRAM_DATA ?? join(PACKAGE_ROOT, '.hologram');
