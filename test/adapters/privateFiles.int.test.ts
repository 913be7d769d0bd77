/**
 * The daemon's own files are written whole and private: 0600 whatever the umask, replacing what
 * was there, and a link put where the temporary file goes (the data dir's root is the owner's,
 * but not every process of the owner's is trusted) never turns the write onto another file.
 */
import { lstatSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { writePrivateFile } from '../../adapters/files/privateFiles.ts';
import { useTempDir } from '../support/tempDir.ts';

const tempDir = useTempDir();

describe('writePrivateFile', () => {
  it('writes the whole file, 0600, over what was there', () => {
    const path = join(tempDir(), 'memory-index.snapshot');
    writeFileSync(path, 'old and longer than the new', { mode: 0o644 });
    writePrivateFile(path, 'new');
    expect(readFileSync(path, 'utf8')).toBe('new');
    expect(lstatSync(path).mode & 0o777).toBe(0o600);
    writePrivateFile(path, new Uint8Array([1, 2, 3]));
    expect([...readFileSync(path)]).toEqual([1, 2, 3]);
  });

  it('does not follow a link lying where its temporary file goes', () => {
    const dir = tempDir();
    const path = join(dir, 'memory-index.snapshot');
    const victim = join(dir, 'settings.json');
    writeFileSync(victim, '{"keep":"me"}', { mode: 0o644 });
    symlinkSync(victim, `${path}.${process.pid}.tmp`);
    writePrivateFile(path, 'snapshot bytes');
    expect(readFileSync(victim, 'utf8')).toBe('{"keep":"me"}');
    expect(lstatSync(victim).mode & 0o777).toBe(0o644);
    expect(lstatSync(path).isFile()).toBe(true);
    expect(readFileSync(path, 'utf8')).toBe('snapshot bytes');
  });
});
