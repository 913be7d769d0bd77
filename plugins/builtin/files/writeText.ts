/**
 * files_write on a path `confinePath` checked. Promise: the file is replaced atomically inside
 * the directory opened under the root (see openUnderRoot), so a parent swapped for a symlink
 * cannot send the write elsewhere; only a regular file (or a new name) is written; an append
 * reads at most `MAX_APPEND_BASE_BYTES` of the old file.
 */
import { errnoCode } from '../../../events/index.ts';
import { lstat } from 'node:fs/promises';
import { basename, dirname } from 'node:path';
import { writeFileAtomic } from '../shared/writeFileAtomic.ts';
import type { ConfinedPath } from './confinePath.ts';
import { FileOperationFailed } from './errors.ts';
import { explained } from './fsRefusals.ts';
import { inside, openDirUnderRoot, openFileIn, requireRegularFile, type DirHandle } from './openUnderRoot.ts';

/** The largest file files_write appends to (an append rewrites the whole file). */
export const MAX_APPEND_BASE_BYTES = 8 * 1024 * 1024;

/** The old content for an append: empty for a new file. */
const existingBytes = async (dir: DirHandle, name: string, shown: string): Promise<Buffer> => {
  const opened = await openFileIn(dir, name, shown).catch((error: unknown) => {
    if (errnoCode(error) === 'ENOENT') return null;
    throw error;
  });
  if (opened === null) return Buffer.alloc(0);
  const { handle, stats } = opened;
  try {
    if (stats.size > MAX_APPEND_BASE_BYTES) {
      throw new FileOperationFailed(
        shown,
        `has ${stats.size} bytes, more than files_write appends to (${MAX_APPEND_BASE_BYTES} bytes)`,
        'write the new text to another file',
      );
    }
    return await handle.readFile();
  } finally {
    await handle.close();
  }
};

/** Writes (or appends) `content`, creating missing parent directories; the file is replaced atomically. */
export const writeText = (path: ConfinedPath, content: string, append: boolean): Promise<string> =>
  explained(path.lexical, async () => {
    const shown = path.lexical;
    const name = basename(path.real);
    const dir = await openDirUnderRoot(path.root, dirname(path.real), shown, { create: true });
    try {
      const now = await lstat(inside(dir, name)).catch((error: unknown) => {
        if (errnoCode(error) === 'ENOENT') return null;
        throw error;
      });
      if (now !== null) requireRegularFile(now, shown);
      const existing = append ? await existingBytes(dir, name, shown) : Buffer.alloc(0);
      const data = Buffer.concat([existing, Buffer.from(content, 'utf8')]);
      await writeFileAtomic(inside(dir, name), data);
      const added = Buffer.byteLength(content, 'utf8');
      return append ? `appended ${added} bytes to ${shown} (now ${data.length} bytes)` : `wrote ${added} bytes to ${shown}`;
    } finally {
      await dir.handle.close();
    }
  });
