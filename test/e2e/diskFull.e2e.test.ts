/**
 * The disk of the data dir fills while homed runs (here a small tmpfs, filled from outside, as a
 * plugin or a download beside it would): the next append meets a full disk, homed frees the room
 * it kept for the log and goes on, says so and what to do, and the message sent then is answered
 * and in the log. Needs root to mount the tmpfs.
 */
import { spawnSync } from 'node:child_process';
import { closeSync, openSync, rmSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { LOG_ROOM_FILE } from '../../adapters/files/logRoom.ts';
import { logOf, testDataDir, useDaemons, verifyReplay } from '../support/homedSession.ts';
import { startLlmServer } from '../support/llmServer/index.ts';
import { finished, spawnNode, waitForLine, WAITER } from '../support/processes.ts';
import { useTempDir } from '../support/tempDir.ts';

const tempDir = useTempDir();
const daemons = useDaemons();
const root = process.getuid?.() === 0;

/** Writes zeros into `path` until the disk has no room left. */
const fillDisk = (path: string): void => {
  const fd = openSync(path, 'w');
  const chunk = Buffer.alloc(1024 * 1024);
  try {
    for (;;) writeSync(fd, chunk);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOSPC') throw error;
  } finally {
    closeSync(fd);
  }
  // The last bytes a page at a time, so not a block is left.
  const last = openSync(`${path}.last`, 'w');
  try {
    for (;;) writeSync(last, Buffer.alloc(4096));
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOSPC') throw error;
  } finally {
    closeSync(last);
  }
};

describe('a disk that fills while homed runs', () => {
  it.skipIf(!root)(
    'frees the room kept for the log, goes on, and says what to do',
    async () => {
      const disk = tempDir();
      const mounted = spawnSync('mount', ['-t', 'tmpfs', '-o', 'size=96m,mode=0700', 'hologram-disk-full', disk]);
      expect(mounted.status, mounted.stderr.toString()).toBe(0);
      daemons.onCleanup(() => void spawnSync('umount', ['-l', disk]));
      const server = await startLlmServer([{ text: 'first' }, { text: 'still here' }]);
      daemons.onCleanup(() => server.close());
      const dir = testDataDir(disk, { llm: server });
      const daemon = await daemons.start(dir);
      expect((await finished(spawnNode([WAITER, '--data', dir, 'hello']))).stdout).toBe('first\n');

      fillDisk(join(disk, 'filler'));
      const freed = waitForLine(daemon.process, /homed: the disk of the data dir is full: the 16 MB kept for the log were freed/);
      const reply = await finished(spawnNode([WAITER, '--data', dir, 'are you there?']));
      expect(reply.stdout).toBe('still here\n');
      expect(await freed).toMatch(/free room on that disk .*then restart homed to keep them again/);

      rmSync(join(disk, 'filler'), { force: true });
      rmSync(join(disk, 'filler.last'), { force: true });
      await daemons.stop(daemon);
      const said = (await logOf(dir, '--type', 'OutputSent')).map((e) => (e.data as { text?: string }).text);
      expect(said).toContain('still here');
      await verifyReplay(dir);
      // The next start keeps the room again.
      const again = await daemons.start(dir);
      await daemons.stop(again);
      expect(spawnSync('test', ['-s', join(dir, LOG_ROOM_FILE)]).status).toBe(0);
    },
    60_000,
  );
});
