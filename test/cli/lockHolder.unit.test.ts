/** Reading the holder of a POSIX lock out of /proc/locks text: only a write lock on the same device and inode counts. */
import { describe, expect, it } from 'vitest';
import { writeLockHolder } from '../../cli/lockHolder.ts';

// st_dev of major 0xfe, minor 0 as Linux encodes it; and of major 8, minor 0x123 (minor above 255).
const DEV_FE00 = 0xfe00;
const DEV_8_123 = (0x123 & 0xff) | (8 << 8) | ((0x123 & ~0xff) << 12);

const LOCKS = [
  '1: POSIX  ADVISORY  READ 111 fe:00:2195506 128 128',
  '2: POSIX  ADVISORY  WRITE 222 fe:00:999 1073741824 1073742335',
  '3: POSIX  ADVISORY  WRITE 333 fe:00:2195506 1073741824 1073742335',
  '3: -> POSIX  ADVISORY  WRITE 444 fe:00:2195506 1073741824 1073742335',
  '4: OFDLCK ADVISORY  WRITE -1 08:123:77 0 EOF',
  '5: POSIX  ADVISORY  WRITE 555 08:123:77 0 EOF',
].join('\n');

describe('writeLockHolder', () => {
  it('names the pid of the write lock on the inode, not readers, waiters or other files', () => {
    expect(writeLockHolder(LOCKS, DEV_FE00, 2195506)).toBe(333);
    expect(writeLockHolder(LOCKS, DEV_FE00, 999)).toBe(222);
  });

  it('matches the device too, including minors above 255, and skips locks without a pid', () => {
    expect(writeLockHolder(LOCKS, DEV_8_123, 77)).toBe(555);
    expect(writeLockHolder(LOCKS, DEV_FE00, 77)).toBeUndefined();
  });

  it('finds nothing in empty or foreign text', () => {
    expect(writeLockHolder('', DEV_FE00, 2195506)).toBeUndefined();
    expect(writeLockHolder('not /proc/locks at all\n\n', DEV_FE00, 2195506)).toBeUndefined();
  });
});
