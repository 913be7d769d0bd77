/**
 * A subprocess plugin's state folder, the one folder of the disk it may write, is bounded
 * (`security.sandbox.pluginStateMb`): one file past the bound fails to be written (EFBIG, in its
 * sandbox), a folder filled past it by many files gets the plugin stopped within seconds, said on
 * homed's output and in `homed plugins`, and it is not started again while its folder holds more;
 * emptied, `homed plugins start` starts it. Files it removed but holds open count, and so does
 * what it writes before it says hello; folders deeper than a path may be count as full. A folder
 * over the bound before homed starts stops no other plugin; a disk with less free than the reserve
 * kept for the log starts none. The log replays.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { probeSandbox } from '../../plugins/host/processSandbox.ts';
import { testDataDir, useDaemons, verifyReplay } from '../support/homedSession.ts';
import { startLlmServer } from '../support/llmServer/index.ts';
import { messagesOf } from '../support/llmServer/recordedMessages.ts';
import { finished, runHomed, spawnNode, waitForLine, WAITER } from '../support/processes.ts';
import { useTempDir } from '../support/tempDir.ts';

const tempDir = useTempDir();
const daemons = useDaemons();
const canIsolate = probeSandbox('isolate').kind === 'available';

const pluginLine = (listing: string, name: string): string => listing.split('\n').find((l) => l.startsWith(name)) ?? '';

describe("a plugin's state folder quota", () => {
  it('refuses a file past it, stops a plugin whose folder fills past it, and starts it again once emptied', async () => {
    const server = await startLlmServer([]);
    daemons.onCleanup(() => server.close());
    const dir = testDataDir(tempDir(), { llm: server, plugins: ['filler'], settings: { security: { sandbox: { pluginStateMb: 2 } } } });
    const state = join(dir, 'state', 'filler');
    server.setScript([
      { toolCalls: [{ id: 'big', name: 'filler_fill', arguments: { files: 1, megabytes: 3 } }] },
      { text: 'tried a big file' },
      { toolCalls: [{ id: 'many', name: 'filler_fill', arguments: { files: 3, megabytes: 1 } }] },
      { text: 'filled' },
      { toolCalls: [{ id: 'held', name: 'filler_fill', arguments: { files: 3, megabytes: 1, hold: true } }] },
      { text: 'filled and hidden' },
      { toolCalls: [{ id: 'deep', name: 'filler_deep', arguments: {} }] },
      { text: 'dug deep' },
    ]);
    const daemon = await daemons.start(dir);
    const big = await finished(spawnNode([WAITER, '--data', dir, 'write one big file']));
    expect(big.stdout).toBe('tried a big file\n');
    const [bigResult] = messagesOf(server.requests[1]!).filter((m) => m.role === 'tool');
    // Bounded by the kernel in its sandbox; without one, the count stops it instead.
    if (canIsolate) expect(bigResult?.content).toBe('wrote 0, then failed: EFBIG');
    for (const file of readdirSync(state)) rmSync(join(state, file));

    const stopped = waitForLine(
      daemon.process,
      /plugin filler: crashed \(plugin 'filler': its state folder holds more than 2 MB \(security\.sandbox\.pluginStateMb\), so homed stopped it\)/,
      20_000,
    );
    const many = await finished(spawnNode([WAITER, '--data', dir, 'write many files']));
    expect(many.stdout).toBe('filled\n');
    await stopped;
    // Restarted after its backoff, its start is refused while the folder holds more, and it is not tried again.
    await waitForLine(
      daemon.process,
      /plugin 'filler' is not restarted until it is fixed: .*its state folder holds more than 2 MB/,
      20_000,
    );
    const listing = await runHomed(['plugins', '--data', dir]);
    expect(pluginLine(listing.stdout, 'filler')).toMatch(/^filler\s+subprocess\s+stopped\s+restarts 1$/);
    expect(listing.stdout).toContain(
      `last failure: plugin 'filler' is not restarted until it is fixed: plugin 'filler' was not started: its state folder holds more than 2 MB`,
    );
    // Cut short in the listing, the failure keeps its end: what to run once it is fixed.
    expect(listing.stdout).toContain("then run 'homed plugins start filler'");

    // Started again while its folder still holds more, it says why on stderr, in full.
    const still = await runHomed(['plugins', 'start', 'filler', '--data', dir]);
    expect(still.code).toBe(1);
    expect(still.stderr).toMatch(
      /^homed: filler did not stay running \(.*\): plugin 'filler' is not restarted until it is fixed: .*its state folder holds more than 2 MB/,
    );
    expect(still.stderr).toContain(
      "remove what it does not need from that folder (or raise security.sandbox.pluginStateMb in settings.json and restart homed); then run 'homed plugins start filler'",
    );

    for (const file of readdirSync(state)) rmSync(join(state, file));
    const started = await runHomed(['plugins', 'start', 'filler', '--data', dir]);
    expect(started.stdout).toMatch(/filler\s+subprocess\s+running/);

    // Files it removed but holds open are on the disk still, though no walk of the folder finds them.
    const stoppedAgain = waitForLine(
      daemon.process,
      /plugin filler: crashed \(plugin 'filler': its state folder holds more than 2 MB/,
      20_000,
    );
    expect((await finished(spawnNode([WAITER, '--data', dir, 'fill and hide']))).stdout).toBe('filled and hidden\n');
    await stoppedAgain;
    expect(readdirSync(state)).toEqual([]);
    // Gone with its process, they leave the folder empty: its next start goes ahead.
    await expect
      .poll(async () => pluginLine((await runHomed(['plugins', '--data', dir])).stdout, 'filler'), { timeout: 20_000, interval: 500 })
      .toMatch(/^filler\s+subprocess\s+running\s+restarts 1 pid/);

    // Folders deeper than a path may be cannot be measured: that counts as full.
    const unmeasured = waitForLine(
      daemon.process,
      /plugin filler: crashed \(plugin 'filler': its state folder could not be measured \(ENAMETOOLONG at d{120}…\), so it counts as full, so homed stopped it\)/,
      20_000,
    );
    expect((await finished(spawnNode([WAITER, '--data', dir, 'dig deep']))).stdout).toBe('dug deep\n');
    await unmeasured;
    await waitForLine(daemon.process, /plugin 'filler' is not restarted until it is fixed: .*could not be measured/, 20_000);
    await daemons.stop(daemon);
    await verifyReplay(dir);
    spawnSync('rm', ['-rf', state]);
  }, 120_000);

  it('stops a plugin that fills its folder before it says hello', async () => {
    const dir = testDataDir(tempDir(), { plugins: ['eager'], settings: { security: { sandbox: { pluginStateMb: 2 } } } });
    // Its first start waits for it to greet, or fail: homed is ready only after.
    const daemon = await daemons.start(dir);
    expect(daemon.output).toMatch(
      /plugin eager: start failed: plugin 'eager': its state folder holds more than 2 MB \(security\.sandbox\.pluginStateMb\), so homed stopped it before it said 'ready'/,
    );
    await waitForLine(daemon.process, /plugin 'eager' is not restarted until it is fixed: .*its state folder holds more than 2 MB/, 20_000);
    await daemons.stop(daemon);
  }, 60_000);

  it('starts no subprocess plugin while the disk of the data dir has less free than the reserve kept for the log', async () => {
    // 1 TiB: more than this machine's disk has free, as a disk nearly full would be.
    const dir = testDataDir(tempDir(), { plugins: ['filler'], settings: { security: { sandbox: { diskReserveMb: 1_048_576 } } } });
    const daemon = await daemons.start(dir);
    const listing = await runHomed(['plugins', '--data', dir]);
    expect(pluginLine(listing.stdout, 'filler')).toMatch(/^filler\s+subprocess\s+stopped\s+restarts 0$/);
    expect(listing.stdout).toContain('its state folder is on has less than 1048576 MB free (security.sandbox.diskReserveMb)');
    // In full on homed's output (the listing cuts a failure short).
    expect(daemon.output).toContain(
      'its state folder is on has less than 1048576 MB free (security.sandbox.diskReserveMb), kept for the log: ' +
        'plugins writing there are stopped while it has less, ',
    );
    expect(daemon.output).toContain(
      '; free room on that disk (or lower security.sandbox.diskReserveMb in settings.json and restart homed)',
    );
    // The built-ins run: they write through the daemon.
    expect(pluginLine(listing.stdout, 'cli')).toMatch(/running/);
    await daemons.stop(daemon);
  });

  it('does not start a plugin whose folder is over the quota already, and starts the rest', async () => {
    const dir = testDataDir(tempDir(), { plugins: ['filler', 'gatekeeper'], settings: { security: { sandbox: { pluginStateMb: 1 } } } });
    const state = join(dir, 'state', 'filler');
    mkdirSync(state, { recursive: true, mode: 0o700 });
    writeFileSync(join(state, 'left-over'), Buffer.alloc(2 * 1024 * 1024, 'y'));
    const daemon = await daemons.start(dir);
    const listing = await runHomed(['plugins', '--data', dir]);
    expect(pluginLine(listing.stdout, 'gatekeeper')).toMatch(/running/);
    expect(pluginLine(listing.stdout, 'filler')).toMatch(/^filler\s+subprocess\s+stopped\s+restarts 0$/);
    expect(listing.stdout).toContain(`its state folder holds more than 1 MB (security.sandbox.pluginStateMb), ${state}`);
    await daemons.stop(daemon);
  });
});
