/**
 * Stopping homed by signal, as people and service managers do it. Signals that repeat while
 * the daemon stops (an impatient second Ctrl-C, npm forwarding one) change nothing. Under npm,
 * as a service manager or `docker stop` meets it, SIGTERM goes to npm's pid only: `npm start`
 * (which execs node) and `npx homed run` (where a shell npm does not control sits between npm
 * and node) must both end with the daemon stopped in order and nothing of theirs left running;
 * so must a Ctrl-C, which reaches the daemon twice under npm, and an npm killed outright.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { logOf, testDataDir, useDaemons, verifyReplay } from '../support/homedSession.ts';
import { finished, HOMED, hostPidOfTag, processState, REPO, spawnNode, waitForLine } from '../support/processes.ts';
import { useTempDir } from '../support/tempDir.ts';

const tempDir = useTempDir();
const daemons = useDaemons();

/** `/proc/PID/stat` split after the command name (which may hold spaces): [state, ppid, pgrp, ...]. */
const statOf = (pid: string): string[] | undefined => {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  } catch {
    return undefined; // gone
  }
};

/** Live processes (not zombies, which have exited and wait only to be reaped) of process group `pgid`, and `pid` if live. */
const leftBehind = (pgid: number, pid: number): number[] =>
  readdirSync('/proc')
    .filter((entry) => /^\d+$/.test(entry))
    .filter((entry) => {
      const stat = statOf(entry);
      return stat !== undefined && stat[0] !== 'Z' && (stat[2] === String(pgid) || entry === String(pid));
    })
    .map(Number);

/** Waits until nothing npm started (its group: npm, its shell, the daemon) and not the daemon itself is running. */
const nothingLeft = async (pgid: number, daemon: number, withinMs = 20_000): Promise<number[]> => {
  const until = Date.now() + withinMs;
  for (;;) {
    const left = leftBehind(pgid, daemon);
    if (left.length === 0 || Date.now() > until) return left;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
};

/**
 * `npm ARGS` (or `npx ARGS`) in the checkout, in its own process group (as a terminal's
 * foreground job), once the daemon under it is ready; `daemon` is the daemon's own pid, read
 * from DIR/homed.pid, and not npm's.
 */
const underNpm = async (dir: string, args: string[], command: 'npm' | 'npx' = 'npm') => {
  const npm = spawn(command, args, { cwd: REPO, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
  const exited = finished(npm);
  let daemon: number | undefined;
  daemons.onCleanup(async () => {
    // Only what this test started: npm's group, and the daemon if it was left behind.
    if (npm.exitCode === null && npm.signalCode === null) process.kill(-npm.pid!, 'SIGKILL');
    if (daemon !== undefined && leftBehind(npm.pid!, daemon).includes(daemon)) process.kill(daemon, 'SIGKILL');
    await exited.catch(() => undefined);
  });
  await waitForLine(npm as ChildProcess, /homed: ready/, 60_000);
  daemon = Number(readFileSync(join(dir, 'homed.pid'), 'utf8').split('\n')[0]);
  expect(daemon).not.toBe(npm.pid);
  return { npm, daemon, exited };
};

/** The kernel's last fact is an orderly stop, for `reason`; the log replays. */
const expectCleanStop = async (dir: string, reason: string) => {
  const kernel = await logOf(dir, '--stream', 'kernel');
  expect(kernel.at(-1)).toMatchObject({ type: 'KernelStopped', data: { reason } });
  await verifyReplay(dir);
};

describe('homed stopping', () => {
  it('goes on with its stop, once, through a second SIGINT and a SIGTERM sent while it stops', async () => {
    const dir = testDataDir(tempDir());
    const daemon = await daemons.start(dir);
    const stopping = waitForLine(daemon.process, /homed: stopping/);
    daemon.process.kill('SIGINT');
    await stopping;
    daemon.process.kill('SIGTERM');
    daemon.process.kill('SIGINT');
    const result = await daemon.exited;
    expect(result.signal).toBeNull();
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toContain('every acknowledged event is on disk');
    expect((await logOf(dir, '--type', 'KernelStopped')).length).toBe(1);
    await expectCleanStop(dir, 'received SIGINT');
  });
});

describe('homed stopped while it starts', () => {
  it('a Ctrl-C while a plugin has not greeted yet ends its process there, not at its handshake timeout, and stops in order', async () => {
    const dir = testDataDir(tempDir(), { plugins: ['silent'] });
    const homed = spawnNode([HOMED, 'run', '--data', dir]);
    const exited = finished(homed);
    daemons.onCleanup(async () => {
      if (homed.exitCode === null && homed.signalCode === null) homed.kill('SIGKILL');
      await exited.catch(() => undefined);
    });
    const waiting = await waitForLine(homed, /plugin silent \(stderr\): waiting, never greeting \(tag \S+\)/);
    const pid = hostPidOfTag(/never greeting \(tag (\S+)\)/.exec(waiting)![1]!);
    homed.kill('SIGINT');
    const result = await exited;
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toContain('homed: SIGINT while starting; stopping');
    expect(result.stdout).toContain('plugin silent: stopped while starting');
    // Not left to time out: the kernel ended it.
    expect(result.stdout).not.toMatch(/no 'hello' frame within/);
    expect(processState(pid)).toBe('gone');
    expect(await logOf(dir, '--type', 'ModuleFailed')).toEqual([]);
    await expectCleanStop(dir, 'received SIGINT');
  });
});

describe('homed under npm', () => {
  it('npm start: SIGTERM to npm stops the daemon in order, and npm exits 0', async () => {
    const dir = testDataDir(tempDir());
    const { npm, daemon, exited } = await underNpm(dir, ['start', '--', '--data', dir]);
    npm.kill('SIGTERM');
    const result = await exited;
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toContain('every acknowledged event is on disk');
    expect(await nothingLeft(npm.pid!, daemon)).toEqual([]);
    await expectCleanStop(dir, 'received SIGTERM');
  });

  it('npm start: a Ctrl-C, which reaches the daemon from the terminal and again from npm, stops it once, in order', async () => {
    const dir = testDataDir(tempDir());
    const { npm, daemon, exited } = await underNpm(dir, ['start', '--', '--data', dir]);
    process.kill(-npm.pid!, 'SIGINT'); // the terminal signals the whole foreground group
    const result = await exited;
    expect(await nothingLeft(npm.pid!, daemon)).toEqual([]);
    expect(result.stdout).toContain('every acknowledged event is on disk');
    await expectCleanStop(dir, 'received SIGINT');
  });

  it('npx homed run: SIGTERM to npx ends npm and its shell, and the daemon, orphaned, stops in order', async () => {
    const dir = testDataDir(tempDir());
    const { npm, daemon, exited } = await underNpm(dir, ['homed', 'run', '--data', dir], 'npx');
    npm.kill('SIGTERM');
    // npm dies of the signal at once, not waiting for what its shell started; the pipe it
    // shares with the daemon closes once the daemon is done too.
    expect(await nothingLeft(npm.pid!, daemon)).toEqual([]);
    const result = await exited;
    expect(result.stdout).toContain('homed: stopping (parent exited)');
    expect(result.stdout).toContain('every acknowledged event is on disk');
    await expectCleanStop(dir, 'its parent exited');
  });

  it('npm start: npm killed outright, the daemon notices and stops in order', async () => {
    const dir = testDataDir(tempDir());
    const { npm, daemon, exited } = await underNpm(dir, ['start', '--', '--data', dir]);
    npm.kill('SIGKILL');
    expect(await nothingLeft(npm.pid!, daemon)).toEqual([]);
    const result = await exited;
    expect(result.stdout).toContain('every acknowledged event is on disk');
    await expectCleanStop(dir, 'its parent exited');
  });
});
