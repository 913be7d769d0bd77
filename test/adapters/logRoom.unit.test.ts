import { mkdirSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { freeLogRoom, keepLogRoom, LOG_ROOM_FILE } from '../../adapters/files/logRoom.ts';
import { useTempDir } from '../support/tempDir.ts';

const tempDir = useTempDir();
const BYTES = 3 * 1024 * 1024 + 5;

describe('the room kept for the log', () => {
  it('is made once, taking its blocks on the disk, private, kept at the next start, and freed when asked', () => {
    const dir = tempDir();
    expect(keepLogRoom(dir, BYTES)).toEqual({ kind: 'made' });
    const made = statSync(join(dir, LOG_ROOM_FILE));
    expect(made.size).toBe(BYTES);
    expect(made.blocks * 512).toBeGreaterThanOrEqual(BYTES);
    expect(made.mode & 0o777).toBe(0o600);
    expect(keepLogRoom(dir, BYTES)).toEqual({ kind: 'kept' });
    expect(freeLogRoom(dir)).toBe(true);
    expect(freeLogRoom(dir)).toBe(false);
  });

  it('is made again whole when one was left short, and never through a link or over a folder', () => {
    const dir = tempDir();
    writeFileSync(join(dir, LOG_ROOM_FILE), 'short');
    expect(keepLogRoom(dir, BYTES)).toEqual({ kind: 'made' });
    expect(statSync(join(dir, LOG_ROOM_FILE)).size).toBe(BYTES);

    const linked = tempDir();
    const target = join(tempDir(), 'elsewhere');
    writeFileSync(target, 'keep me');
    symlinkSync(target, join(linked, LOG_ROOM_FILE));
    expect(keepLogRoom(linked, BYTES)).toEqual({
      kind: 'not made',
      why: `${join(linked, LOG_ROOM_FILE)} is there and is not a file; remove it`,
    });
    expect(freeLogRoom(linked)).toBe(false);
    expect(statSync(target).size).toBe(7);

    const folder = tempDir();
    mkdirSync(join(folder, LOG_ROOM_FILE));
    expect(keepLogRoom(folder, BYTES).kind).toBe('not made');
  });
});
