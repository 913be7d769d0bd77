/**
 * Plugin processes as a user sees them through homed: `homed plugins` lists them live (and
 * from the log when no daemon runs), disable/enable/reload act on the running daemon and a
 * disabled plugin stays disabled across a restart; killing the daemon with SIGKILL leaves no
 * plugin process behind.
 */
import { describe, expect, it } from 'vitest';
import { testDataDir, useDaemons } from '../support/homedSession.ts';
import { hostPidOfTag, processState, runHomed, waitForLine } from '../support/processes.ts';
import { useTempDir } from '../support/tempDir.ts';

const tempDir = useTempDir();
const daemons = useDaemons();

const dataDirWith = (plugins: string[]): string => testDataDir(tempDir(), { plugins });

const pluginLine = (listing: string, name: string): string => listing.split('\n').find((l) => l.startsWith(name)) ?? '';

describe('plugin processes through homed', () => {
  it('leaves no plugin process alive 2 s after the daemon is killed with SIGKILL', async () => {
    const dir = dataDirWith(['gatekeeper']);
    const daemon = await daemons.start(dir);
    const listing = await runHomed(['plugins', '--data', dir]);
    const pid = Number(pluginLine(listing.stdout, 'gatekeeper').match(/pid (\d+)/)?.[1]);
    expect(processState(pid)).toBe('alive');
    daemon.process.kill('SIGKILL');
    await daemon.exited;
    await expect.poll(() => processState(pid), { timeout: 2_000, interval: 50 }).toBe('gone');
  });

  it('lists plugins live and from the log, and keeps a disabled plugin disabled across a restart', async () => {
    const dir = dataDirWith(['gatekeeper']);
    let daemon = await daemons.start(dir);
    const live = await runHomed(['plugins', '--data', dir]);
    expect(pluginLine(live.stdout, 'gatekeeper')).toMatch(/^gatekeeper\s+subprocess\s+running\s+restarts 0 pid \d+$/);
    expect(live.stdout).toContain('tools: lookup');
    expect(pluginLine(live.stdout, 'timer')).toMatch(/builtin\s+running/);

    const disabled = await runHomed(['plugins', 'disable', 'gatekeeper', '--data', dir]);
    expect(disabled.stdout).toMatch(/^asked homed to disable gatekeeper; it is now:\ngatekeeper\s+subprocess\s+stopped\s+\(disabled\)/);
    expect(disabled.stdout).not.toContain('tools: lookup');
    // Starting a disabled plugin does nothing, and says so with what to run instead.
    const notStarted = await runHomed(['plugins', 'start', 'gatekeeper', '--data', dir]);
    expect(notStarted.stdout).toMatch(/^asked homed to start gatekeeper; it is now:\ngatekeeper\s+subprocess\s+stopped\s+\(disabled\)/);
    expect(notStarted.stderr).toBe(
      "homed: gatekeeper is disabled, so it was not started; 'homed plugins enable gatekeeper' enables and starts it\n",
    );
    expect(notStarted.code).toBe(1);
    await daemons.stop(daemon);

    const recorded = await runHomed(['plugins', '--data', dir]);
    expect(recorded.stdout).toContain('homed is not running');
    expect(pluginLine(recorded.stdout, 'gatekeeper')).toMatch(/stopped\s+\(disabled\)/);

    daemon = await daemons.start(dir);
    expect(pluginLine((await runHomed(['plugins', '--data', dir])).stdout, 'gatekeeper')).toMatch(/stopped\s+\(disabled\)/);
    const enabled = await runHomed(['plugins', 'enable', 'gatekeeper', '--data', dir]);
    expect(enabled.stdout).toMatch(/^asked homed to enable gatekeeper; it is now:\ngatekeeper\s+subprocess\s+running\s/);
    const pidBefore = enabled.stdout.match(/pid (\d+)/)?.[1];
    const reloaded = await runHomed(['plugins', 'reload', 'gatekeeper', '--data', dir]);
    expect(reloaded.stdout).toMatch(/^asked homed to reload gatekeeper; it is now:\ngatekeeper\s+subprocess\s+running\s/);
    expect(reloaded.stdout.match(/pid (\d+)/)?.[1]).not.toBe(pidBefore);
    expect(reloaded.stdout).toContain('tools: lookup');
    const unknown = await runHomed(['plugins', 'reload', 'nosuch', '--data', dir]);
    expect(unknown.stderr).toContain("there is no plugin 'nosuch'; the plugins are: cli, timer, files, webui, memory, gatekeeper");
    expect(unknown.code).toBe(1);
    await daemons.stop(daemon);

    const noDaemon = await runHomed(['plugins', 'reload', 'gatekeeper', '--data', dir]);
    expect(noDaemon.stderr).toContain('no homed is running on');
    expect(noDaemon.code).toBe(1);
  });
  it('stop reaches a plugin still waiting for its handshake: its process ends at once, and it stays stopped', async () => {
    const dir = dataDirWith(['silent']);
    // Ready once its first start has timed out; it is started again after its backoff.
    const daemon = await daemons.start(dir);
    const again = await waitForLine(daemon.process, /plugin silent \(stderr\): waiting, never greeting \(tag \S+\)/);
    const pid = hostPidOfTag(/never greeting \(tag (\S+)\)/.exec(again)![1]!);
    const said = waitForLine(daemon.process, /plugin silent: (stopped while starting|start failed)/);
    const stopped = await runHomed(['plugins', 'stop', 'silent', '--data', dir]);
    expect(stopped.code, stopped.stderr).toBe(0);
    expect(stopped.stdout).toMatch(/^asked homed to stop silent; it is now:\nsilent\s+subprocess\s+stopped/);
    expect(processState(pid)).toBe('gone');
    expect(await said).toMatch(/plugin silent: stopped while starting/);
    await daemons.stop(daemon);
  });
});
