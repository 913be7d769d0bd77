/**
 * The disk of the data dir fills while homed runs (here a small tmpfs, filled from outside, as a
 * plugin or a download beside it would): the next append meets a full disk, homed frees the room
 * it kept for the log and goes on, says so and what to do, and the message sent then is answered
 * and in the log; emptied again, the disk gives the room back to the log while homed runs. Needs
 * root to mount the tmpfs.
 */
import { spawnSync } from 'node:child_process';
import { closeSync, openSync, rmSync, statSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { LOG_ROOM_FILE } from '../../adapters/files/logRoom.ts';
import { logOf, testDataDir, useDaemons, verifyReplay } from '../support/homedSession.ts';
import { startLlmServer } from '../support/llmServer/index.ts';
import { finished, runHomed, spawnNode, waitForLine, WAITER } from '../support/processes.ts';
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

/** A tmpfs of `size` mounted on a new temporary folder, unmounted after the test. */
const mountDisk = (size: string): string => {
  const disk = tempDir();
  const mounted = spawnSync('mount', ['-t', 'tmpfs', '-o', `size=${size},mode=0700`, 'hologram-disk-full', disk]);
  expect(mounted.status, mounted.stderr.toString()).toBe(0);
  daemons.onCleanup(() => void spawnSync('umount', ['-l', disk]));
  return disk;
};

describe('a disk that fills while homed runs', () => {
  it.skipIf(!root)(
    'frees the room kept for the log, goes on, and says what to do',
    async () => {
      const disk = mountDisk('96m');
      const server = await startLlmServer([{ text: 'first' }, { text: 'still here' }]);
      daemons.onCleanup(() => server.close());
      const dir = testDataDir(disk, { llm: server });
      const daemon = await daemons.start(dir);
      expect((await finished(spawnNode([WAITER, '--data', dir, 'hello']))).stdout).toBe('first\n');

      fillDisk(join(disk, 'filler'));
      const freed = waitForLine(daemon.process, /homed: the disk of the data dir is full: the 16 MB kept for the log were freed/);
      const reply = await finished(spawnNode([WAITER, '--data', dir, 'are you there?']));
      expect(reply.stdout).toBe('still here\n');
      expect(await freed).toMatch(/free room on that disk .*homed keeps them again once it has room/);

      // Room made again on the disk, homed keeps it for the log again while it runs.
      const keptAgain = waitForLine(
        daemon.process,
        /homed: the disk of the data dir has room again: 16 MB are kept for the log again/,
        20_000,
      );
      rmSync(join(disk, 'filler'), { force: true });
      rmSync(join(disk, 'filler.last'), { force: true });
      await keptAgain;
      expect(statSync(join(dir, LOG_ROOM_FILE)).size).toBe(16 * 1024 * 1024);
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

  it.skipIf(!root)(
    'stops the plugin filling it and not the others, says how much its stop freed, and starts it again only when asked',
    async () => {
      const disk = mountDisk('200m');
      const server = await startLlmServer([
        // Removed once written and held open: no walk of its folder finds it, only the disk's room and its open files show it.
        { toolCalls: [{ id: 'hidden', name: 'filler_fill', arguments: { files: 1, megabytes: 130, hold: true } }] },
        { text: 'the tool is gone' },
      ]);
      daemons.onCleanup(() => server.close());
      const dir = testDataDir(disk, {
        llm: server,
        plugins: ['filler', 'mute'],
        settings: { security: { sandbox: { diskReserveMb: 64 } } },
      });
      const daemon = await daemons.start(dir);
      const stopped = waitForLine(
        daemon.process,
        /plugin filler: crashed \(plugin 'filler': the disk of the data dir had less than 64 MB free \(security\.sandbox\.diskReserveMb, kept for the log\), so homed stopped it, which freed (\d+) MB\)/,
        20_000,
      );
      const refused = waitForLine(
        daemon.process,
        /plugin 'filler' is not restarted until it is fixed: its last run took room the log needs/,
        20_000,
      );
      expect((await finished(spawnNode([WAITER, '--data', dir, 'fill and hide']))).stdout).toBe('the tool is gone\n');
      const freed = Number((await stopped).match(/which freed (\d+) MB/)![1]);
      expect(freed).toBeGreaterThan(64);
      // Its stop freed the room: it is not started again by itself (it would fill the disk again); the other was never stopped.
      expect(await refused).toContain(
        `stopping it freed ${freed} MB (files it held open, or wrote outside its state folder); then run 'homed plugins start filler'`,
      );
      const listing = (await runHomed(['plugins', '--data', dir])).stdout;
      expect(listing).toMatch(/^filler\s+subprocess\s+stopped\s+restarts 1$/m);
      expect(listing).toMatch(/^mute\s+subprocess\s+running\s+restarts 0 pid/m);
      const started = await runHomed(['plugins', 'start', 'filler', '--data', dir]);
      expect(started.stdout).toMatch(/filler\s+subprocess\s+running/);
      await daemons.stop(daemon);
      await verifyReplay(dir);
    },
    60_000,
  );

  it.skipIf(!root)(
    'outlives a plugin that fills the whole disk at every start, before it says hello',
    async () => {
      const disk = mountDisk('200m');
      const server = await startLlmServer([{ text: 'still here' }, { text: 'here again' }]);
      daemons.onCleanup(() => server.close());
      const dir = testDataDir(disk, {
        llm: server,
        plugins: ['glutton', 'mute'],
        settings: { security: { sandbox: { diskReserveMb: 64 } } },
      });
      for (const [round, answer] of [
        [1, 'still here'],
        [2, 'here again'],
      ] as const) {
        const daemon = await daemons.start(dir);
        await waitForLine(
          daemon.process,
          /plugin 'glutton' is not restarted until it is fixed: its last run took room the log needs/,
          20_000,
        );
        expect((await finished(spawnNode([WAITER, '--data', dir, `round ${round}`]))).stdout).toBe(`${answer}\n`);
        const listing = (await runHomed(['plugins', '--data', dir])).stdout;
        expect(listing).toMatch(/^glutton\s+subprocess\s+stopped\s+restarts 1$/m);
        expect(listing).toMatch(/^mute\s+subprocess\s+running\s+restarts 0 pid/m);
        await daemons.stop(daemon);
        await verifyReplay(dir);
      }
    },
    60_000,
  );
});
