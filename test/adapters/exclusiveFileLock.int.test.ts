/** The data dir lock's primitive: exclusive, never waiting, released on release, private, and refusing a foreign file. */
import { statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { LockFileUnusable, tryExclusiveLock } from '../../adapters/sqlite/exclusiveFileLock.ts';
import { lockHolderPid } from '../../cli/lockHolder.ts';
import { useTempDir } from '../support/tempDir.ts';

const tempDir = useTempDir();

describe('tryExclusiveLock', () => {
  it('gives the lock to one taker at a time, at once, and to the next after release', () => {
    const path = join(tempDir(), 'homed.lock');
    const first = tryExclusiveLock(path);
    expect(first).toBeDefined();
    expect(tryExclusiveLock(path)).toBeUndefined();
    first!.release();
    const second = tryExclusiveLock(path);
    expect(second).toBeDefined();
    second!.release();
  });

  it('creates the lock file 0600, and the kernel names this process as its holder', () => {
    const path = join(tempDir(), 'homed.lock');
    const lock = tryExclusiveLock(path)!;
    try {
      expect(statSync(path).mode & 0o777).toBe(0o600);
      if (process.platform === 'linux') expect(lockHolderPid(path)).toBe(process.pid);
    } finally {
      lock.release();
    }
    if (process.platform === 'linux') expect(lockHolderPid(path)).toBeUndefined();
  });

  it('refuses a file that is not a lock file, saying what to do', () => {
    const path = join(tempDir(), 'homed.lock');
    writeFileSync(path, '12345\n');
    expect(() => tryExclusiveLock(path)).toThrow(LockFileUnusable);
    expect(() => tryExclusiveLock(path)).toThrow(/delete that file and start again/);
  });
});
