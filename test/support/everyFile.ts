/** Every byte of every file under a folder, as one text (latin1, so any byte is one character): where a test looks for a leak. */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

export const everyFileText = (dir: string): string =>
  readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => readFileSync(join(entry.parentPath, entry.name), 'latin1'))
    .join('\n');
