import { mkdirSync, statSync, symlinkSync, truncateSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { existsSync } from 'node:fs';
import { freeLogRoom, keepLogRoom, LOG_ROOM_FILE, LogRoomKeeper, ROOM_CHECK_MS } from '../../adapters/files/logRoom.ts';
import { createVirtualTime } from '../support/virtualTime.ts';
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
    // Of the right size but sparse (a copy, a file system storing zeros as holes), it would free nothing: made again.
    truncateSync(join(dir, LOG_ROOM_FILE), 0);
    truncateSync(join(dir, LOG_ROOM_FILE), BYTES);
    expect(statSync(join(dir, LOG_ROOM_FILE)).blocks).toBe(0);
    expect(keepLogRoom(dir, BYTES)).toEqual({ kind: 'made' });
    expect(statSync(join(dir, LOG_ROOM_FILE)).blocks * 512).toBeGreaterThanOrEqual(BYTES);
    expect(keepLogRoom(dir, BYTES)).toEqual({ kind: 'kept' });

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

  it('is made again while the daemon runs, once the disk has it and a margin free, and said', async () => {
    const dir = tempDir();
    const time = createVirtualTime(0);
    const disk = { free: 0 };
    const said: string[] = [];
    const keeper = new LogRoomKeeper({
      dir,
      timers: time.timers,
      say: (line) => said.push(line),
      bytes: BYTES,
      freeBytes: async () => disk.free,
    });
    expect(keepLogRoom(dir, BYTES)).toEqual({ kind: 'made' });
    expect(keeper.free()).toBe(true);
    expect(existsSync(join(dir, LOG_ROOM_FILE))).toBe(false);
    const look = async () => {
      time.advance(ROOM_CHECK_MS);
      await new Promise((resolve) => setImmediate(resolve));
    };
    // No room, or only the room itself: not taken back (that would be the disk's last).
    await look();
    disk.free = BYTES;
    await look();
    expect(existsSync(join(dir, LOG_ROOM_FILE))).toBe(false);
    expect(said).toEqual([]);
    disk.free = 100 * BYTES;
    await look();
    expect(statSync(join(dir, LOG_ROOM_FILE)).size).toBe(BYTES);
    expect(said).toEqual(['the disk of the data dir has room again: 3 MB are kept for the log again']);
    // Kept, it is not looked for again until it is freed again.
    expect(time.armed).toBe(0);
    expect(keeper.free()).toBe(true);
    expect(time.armed).toBe(1);
    keeper.close();
    expect(time.armed).toBe(0);
  });
});
