/**
 * Which data dir a command uses when given no --data: `$HOLOGRAM_DATA`, else `.hologram/` under
 * PACKAGE_ROOT. Free of the event log, so waiter's bundle stays small; the path is relative to
 * this module's URL, and the bundle (dist/waiter.mjs) sits at the same depth, so it resolves alike.
 */
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { UsageError } from './cliErrors.ts';

export const PACKAGE_ROOT = fileURLToPath(new URL('../', import.meta.url));

export const defaultDataDir = (): string => process.env.HOLOGRAM_DATA || join(PACKAGE_ROOT, '.hologram');

/**
 * The data dir a command uses: `--data` when given, else the default. An empty one (`--data ""`,
 * or `HOLOGRAM_DATA=` set to nothing, as `$TYPO` expands) is refused: it would be the current directory.
 */
export const dataDirFrom = (given: string | undefined): string => {
  if (given === '') throw new UsageError('--data is empty; give the data dir (e.g. --data ~/.hologram)');
  if (given === undefined && process.env.HOLOGRAM_DATA === '') {
    throw new UsageError('HOLOGRAM_DATA is set but empty; set it to the data dir, or unset it for the default');
  }
  return given ?? defaultDataDir();
};
