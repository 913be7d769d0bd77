/**
 * files_read on a path `confinePath` checked. Promise: at most `MAX_READ_BYTES` are read into
 * memory per call, whatever the file's size; only a regular file is read (a FIFO, socket or
 * device is refused without blocking), and it is opened under the root (see openUnderRoot).
 */
import type { ConfinedPath } from './confinePath.ts';
import { FileOperationFailed } from './errors.ts';
import { explained } from './fsRefusals.ts';
import { openFileUnderRoot } from './openUnderRoot.ts';
import { completeUtf8Length } from './utf8Boundary.ts';

/** The most one files_read returns; a longer file is read in pages with `offset`. */
export const MAX_READ_BYTES = 256 * 1024;

export type ReadWindow = Readonly<{ offset: number; limit: number }>;

/** Reads up to `limit` bytes from byte `offset` as UTF-8 text, saying where it cut and how to continue. */
export const readText = (path: ConfinedPath, window: ReadWindow): Promise<string> =>
  explained(path.lexical, async () => {
    const shown = path.lexical;
    const { handle, stats } = await openFileUnderRoot(path.root, path.real, shown);
    try {
      const { size } = stats;
      if (window.offset > 0 && window.offset >= size) {
        throw new FileOperationFailed(shown, `has ${size} bytes, so offset ${window.offset} is past its end`, 'read from a smaller offset');
      }
      const wanted = Math.min(window.limit, MAX_READ_BYTES, Math.max(0, size - window.offset));
      const buffer = Buffer.alloc(wanted);
      const { bytesRead } = await handle.read(buffer, 0, wanted, window.offset);
      let bytes = buffer.subarray(0, bytesRead);
      if (window.offset + bytesRead < size) bytes = bytes.subarray(0, completeUtf8Length(bytes) || bytes.length);
      if (bytes.includes(0)) {
        throw new FileOperationFailed(shown, 'looks like a binary file (it contains NUL bytes)', 'files_read reads text files only');
      }
      const text = bytes.toString('utf8');
      const next = window.offset + bytes.length;
      if (next >= size) return text;
      return `${text}\n[truncated: showed bytes ${window.offset}–${next} of ${size}; call files_read with offset ${next} to read on]`;
    } finally {
      await handle.close();
    }
  });
