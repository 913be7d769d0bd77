/** The LoCoMo conversation files of a directory (every *.json, in numeric order), or the one `only` names. */
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { UsageError } from '../options.ts';

export const conversationFiles = (dir: string | undefined, only: string | undefined): string[] => {
  if (dir === undefined) throw new UsageError('--data DIR is required');
  if (!existsSync(dir) || !statSync(dir).isDirectory()) throw new UsageError(`--data ${dir}: no such directory`);
  const names = readdirSync(dir)
    .filter((f) => f.toLowerCase().endsWith('.json'))
    .sort((a, b) => a.localeCompare(b, 'en', { numeric: true }));
  if (names.length === 0) throw new UsageError(`--data ${dir}: no conversation files (*.json) in it`);
  if (only === undefined) return names.map((f) => join(dir, f));
  const match = names.find((f) => f.replace(/\.json$/i, '') === only || f === only);
  if (match === undefined) throw new UsageError(`--only ${only}: no such conversation in ${dir}; have ${names.join(', ')}`);
  return [join(dir, match)];
};
