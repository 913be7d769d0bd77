/**
 * files_list on a path `confinePath` checked. Promise: the directory listed is the one opened
 * under the root (see openUnderRoot); at most `MAX_LIST_ENTRIES` entries are shown.
 */
import { lstat, readdir } from 'node:fs/promises';
import type { ConfinedPath } from './confinePath.ts';
import { NotARegularFile } from './errors.ts';
import { describeKind } from './fileKind.ts';
import { explained } from './fsRefusals.ts';
import { inside, openDirUnderRoot } from './openUnderRoot.ts';

/** The most entries one files_list shows. */
export const MAX_LIST_ENTRIES = 1000;

/** One line per entry, sorted by name: `name/` for a directory, `name@` for a symlink, `name  (N bytes)` for a file. */
export const listDir = (path: ConfinedPath): Promise<string> =>
  explained(path.lexical, async () => {
    const shown = path.lexical;
    const target = await lstat(path.real);
    if (!target.isDirectory()) throw new NotARegularFile(shown, describeKind(target), 'a directory');
    const dir = await openDirUnderRoot(path.root, path.real, shown);
    try {
      const names = (await readdir(dir.path)).sort();
      const shownNames = names.slice(0, MAX_LIST_ENTRIES);
      const lines = await Promise.all(
        shownNames.map(async (name) => {
          const entry = await lstat(inside(dir, name)).catch(() => null);
          if (entry === null) return name;
          if (entry.isSymbolicLink()) return `${name}@`;
          if (entry.isDirectory()) return `${name}/`;
          if (!entry.isFile()) return `${name}  (${describeKind(entry)})`;
          return `${name}  (${entry.size} bytes)`;
        }),
      );
      const header = `${shown}: ${names.length} ${names.length === 1 ? 'entry' : 'entries'}`;
      const more = names.length > shownNames.length ? [`[${names.length - shownNames.length} more not shown]`] : [];
      return [header, ...lines, ...more].join('\n');
    } finally {
      await dir.handle.close();
    }
  });
