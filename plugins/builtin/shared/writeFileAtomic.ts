/**
 * Whole-file replacement that a crash cannot tear: the bytes go to a fresh temp file beside the
 * target, are flushed, and the temp file is renamed over the target. A reader sees the old
 * file or the new one, never a mix.
 */
import { randomBytes } from 'node:crypto';
import { open, rename, stat, unlink } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';

/** Writes `data` to `path` atomically, keeping the permission bits of a file it replaces. */
export const writeFileAtomic = async (path: string, data: string | Uint8Array): Promise<void> => {
  const mode = await stat(path).then(
    (found) => found.mode & 0o777,
    () => 0o644,
  );
  const temp = join(dirname(path), `.${basename(path)}.${randomBytes(6).toString('hex')}.tmp`);
  // 'wx' fails rather than follow anything already at the temp name.
  const handle = await open(temp, 'wx', mode);
  try {
    try {
      await handle.writeFile(data);
      await handle.sync();
    } finally {
      await handle.close();
    }
    await rename(temp, path);
  } catch (error) {
    await unlink(temp).catch(() => undefined);
    throw error;
  }
};
