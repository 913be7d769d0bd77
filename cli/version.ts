/** What `--version` prints: the program and the version package.json gives (the bundle sits at the same depth, so it finds the same file). */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { PACKAGE_ROOT } from './defaultDataDir.ts';

export const versionLine = (program: string): string => {
  const { version } = JSON.parse(readFileSync(join(PACKAGE_ROOT, 'package.json'), 'utf8')) as { version: string };
  return `${program} ${version}`;
};
