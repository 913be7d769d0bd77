/**
 * The three file operations behind the tools, on paths `confinePath` already checked. Reads are
 * bounded (never more than `MAX_READ_BYTES` in memory for one call); writes replace the file
 * atomically.
 */
import { lstat, mkdir, open, readdir, readFile, stat } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { FileOperationFailed } from './errors.ts';
import { writeFileAtomic } from '../shared/writeFileAtomic.ts';

/** The most one files_read returns; a longer file is read in pages with `offset`. */
export const MAX_READ_BYTES = 256 * 1024;
/** The most entries one files_list shows. */
export const MAX_LIST_ENTRIES = 1000;

const errnoCode = (error: unknown): string | undefined =>
  error instanceof Error && 'code' in error && typeof error.code === 'string' ? error.code : undefined;

const HINTS: Readonly<Record<string, readonly [string, string]>> = {
  ENOENT: ['does not exist', 'check the name with files_list'],
  EISDIR: ['is a directory', 'use files_list to see what it holds'],
  ENOTDIR: ['has a file where a directory was expected on the way', 'check the path with files_list'],
  EACCES: ['is not accessible to the daemon (permission denied)', 'pick another path or fix its permissions'],
  EPERM: ['is not accessible to the daemon (operation not permitted)', 'pick another path or fix its permissions'],
  ELOOP: ['goes through a symlink loop', 'use a path without the looping symlink'],
  ENOSPC: ['could not be written: the disk is full', 'free some space and retry'],
  EROFS: ['is on a read-only file system', 'write somewhere else'],
};

/** Turns a file-system refusal into a typed error naming the path; anything else passes through. */
const explained = async <T>(shownPath: string, run: () => Promise<T>): Promise<T> => {
  try {
    return await run();
  } catch (error) {
    const hint = HINTS[errnoCode(error) ?? ''];
    if (hint === undefined) throw error;
    throw new FileOperationFailed(shownPath, hint[0], hint[1]);
  }
};

/** Length of the longest prefix of `bytes` that does not end inside a UTF-8 sequence. */
export const completeUtf8Length = (bytes: Uint8Array): number => {
  for (let back = 1; back <= Math.min(3, bytes.length); back++) {
    const byte = bytes[bytes.length - back]!;
    if ((byte & 0xc0) === 0x80) continue; // a continuation byte: look further back
    const needed = byte >= 0xf0 ? 4 : byte >= 0xe0 ? 3 : byte >= 0xc0 ? 2 : 1;
    return needed > back ? bytes.length - back : bytes.length;
  }
  return bytes.length;
};

export type ReadWindow = Readonly<{ offset: number; limit: number }>;

/** Reads up to `limit` bytes from byte `offset` as UTF-8 text, saying how to continue when cut. */
export const readText = (real: string, shownPath: string, window: ReadWindow): Promise<string> =>
  explained(shownPath, async () => {
    const handle = await open(real, 'r');
    try {
      const { size } = await handle.stat();
      if (window.offset > 0 && window.offset >= size) {
        throw new FileOperationFailed(
          shownPath,
          `has ${size} bytes, so offset ${window.offset} is past its end`,
          'read from a smaller offset',
        );
      }
      const wanted = Math.min(window.limit, MAX_READ_BYTES, Math.max(0, size - window.offset));
      const buffer = Buffer.alloc(wanted);
      const { bytesRead } = await handle.read(buffer, 0, wanted, window.offset);
      let bytes = buffer.subarray(0, bytesRead);
      const end = window.offset + bytesRead;
      if (end < size) bytes = bytes.subarray(0, completeUtf8Length(bytes) || bytes.length);
      if (bytes.includes(0)) {
        throw new FileOperationFailed(shownPath, 'looks like a binary file (it contains NUL bytes)', 'files_read reads text files only');
      }
      const text = bytes.toString('utf8');
      const next = window.offset + bytes.length;
      if (next >= size) return text;
      return `${text}\n[truncated: showed bytes ${window.offset}–${next} of ${size}; call files_read with offset ${next} to read on]`;
    } finally {
      await handle.close();
    }
  });

/** Writes (or appends) `content`, creating missing parent directories; the file is replaced atomically. */
export const writeText = (real: string, shownPath: string, content: string, append: boolean): Promise<string> =>
  explained(shownPath, async () => {
    await mkdir(dirname(real), { recursive: true });
    const existing = append
      ? await readFile(real).catch((error: unknown) => {
          if (errnoCode(error) === 'ENOENT') return Buffer.alloc(0);
          throw error;
        })
      : Buffer.alloc(0);
    const data = Buffer.concat([existing, Buffer.from(content, 'utf8')]);
    await writeFileAtomic(real, data);
    const added = Buffer.byteLength(content, 'utf8');
    return append ? `appended ${added} bytes to ${shownPath} (now ${data.length} bytes)` : `wrote ${added} bytes to ${shownPath}`;
  });

/** One line per entry, sorted by name: `name/` for a directory, `name@` for a symlink, `name  (N bytes)` for a file. */
export const listDir = (real: string, shownPath: string): Promise<string> =>
  explained(shownPath, async () => {
    const info = await stat(real);
    if (!info.isDirectory()) {
      throw new FileOperationFailed(shownPath, 'is a file, not a directory', 'read it with files_read');
    }
    const names = (await readdir(real)).sort();
    const shown = names.slice(0, MAX_LIST_ENTRIES);
    const lines = await Promise.all(
      shown.map(async (name) => {
        const entry = await lstat(join(real, name)).catch(() => null);
        if (entry === null) return name;
        if (entry.isSymbolicLink()) return `${name}@`;
        if (entry.isDirectory()) return `${name}/`;
        return `${name}  (${entry.size} bytes)`;
      }),
    );
    const header = `${shownPath}: ${names.length} ${names.length === 1 ? 'entry' : 'entries'}`;
    const more = names.length > shown.length ? [`[${names.length - shown.length} more not shown]`] : [];
    return [header, ...lines, ...more].join('\n');
  });
