/**
 * The data dir a person names with --data: made with the folders missing above it, private, and
 * refused with what to do where it cannot be made (never retried for ever).
 */
import { statSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { DataDirMissing, existingDataDir, prepareDataDir } from '../../cli/dataDir.ts';
import { EventLogUnavailable } from '../../events/index.ts';
import { useTempDir } from '../support/tempDir.ts';

const tempDir = useTempDir();

describe('existingDataDir', () => {
  it('says why a dir that cannot be made is missing, instead of how to make it', () => {
    const root = tempDir();
    writeFileSync(join(root, 'afile'), 'x');
    symlinkSync(join(root, 'nowhere'), join(root, 'dead'));
    expect(() => existingDataDir(join(root, 'dead'))).toThrow(
      `the data dir ${join(root, 'dead')} is a link to ${join(root, 'nowhere')}, which does not exist`,
    );
    expect(() => existingDataDir(join(root, 'afile', 'sub'))).toThrow(`cannot be a folder: ${join(root, 'afile')} is a file`);
    expect(() => existingDataDir(join(root, 'afile'))).toThrow(`is a file; give --data a folder, or move that away`);
    expect(() => existingDataDir(join(root, 'missing', 'data'))).toThrow(DataDirMissing);
    expect(existingDataDir(root)).toBe(root);
  });
});

describe('prepareDataDir', () => {
  it('makes the folders missing above the data dir, each 0700', () => {
    const root = tempDir();
    const dir = join(root, 'a', 'b', 'data');
    expect(prepareDataDir(dir)).toBe(dir);
    for (const folder of [join(root, 'a'), join(root, 'a', 'b'), dir]) expect(statSync(folder).mode & 0o777).toBe(0o700);
    expect(prepareDataDir(dir)).toBe(dir);
  });

  it('refuses, at once, a folder that cannot be made though its parent is there (/proc/x, where recursive mkdir spun for ever)', () => {
    expect(() => prepareDataDir('/proc/hologram-nope/data')).toThrow(EventLogUnavailable);
    expect(() => prepareDataDir('/proc/hologram-nope')).toThrow(
      /the data dir \/proc\/hologram-nope cannot be created or written \(ENOENT.*choose another one with --data DIR/,
    );
  });
});
