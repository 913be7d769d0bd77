/**
 * Reaping the process groups a killed daemon left, against real processes: only what is
 * provably of that start dies (its group, started after its leader, its instance marker);
 * a process reusing the group's number, one without the marker, and one from before the
 * leader's start are spared.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { afterEach, describe, expect, it } from 'vitest';
import { PLUGIN_INSTANCE_ENV } from '../../plugins/host/pluginEnv.ts';
import { processInfo, currentBootId } from '../../plugins/host/processTable.ts';
import { reapProcessGroups, survivorsOf, systemProcesses } from '../../plugins/host/reapProcessGroups.ts';

const started: ChildProcess[] = [];
afterEach(() => {
  for (const child of started.splice(0)) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
});

/** A `sleep` leading a process group of its own, with `env`. */
const sleeper = (env: Record<string, string>): Promise<ChildProcess> =>
  new Promise((resolve, reject) => {
    const child = spawn('sleep', ['60'], { detached: true, stdio: 'ignore', env: { PATH: process.env.PATH ?? '', ...env } });
    started.push(child);
    child.once('spawn', () => resolve(child));
    child.once('error', reject);
  });

const exitOf = (child: ChildProcess) =>
  new Promise<NodeJS.Signals | null>((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) resolve(child.signalCode);
    else child.once('exit', (_code, signal) => resolve(signal));
  });

const group = (child: ChildProcess, instance: string, startTicks = processInfo(child.pid!)!.startTicks) => ({
  plugin: 'orphaner',
  pid: child.pid!,
  startTicks,
  bootId: currentBootId(),
  instance,
});

describe('reaping the process groups of a killed daemon', () => {
  it.skipIf(process.platform !== 'linux')('kills a leftover that carries its start marker, and spares one that does not', async () => {
    const ours = await sleeper({ [PLUGIN_INSTANCE_ENV]: 'start-7' });
    const stranger = await sleeper({ [PLUGIN_INSTANCE_ENV]: 'someone-else' });
    const unmarked = await sleeper({});
    const [a, b, c] = reapProcessGroups([group(ours, 'start-7'), group(stranger, 'start-7'), group(unmarked, 'start-7')]);
    expect(a).toMatchObject({ killed: [ours.pid], spared: 0 });
    expect(b).toMatchObject({ killed: [], spared: 1, reason: 'nothing of it was left running' });
    expect(c).toMatchObject({ killed: [], spared: 1 });
    expect(await exitOf(ours)).toBe('SIGKILL');
    expect(processInfo(stranger.pid!)).not.toBeNull();
    expect(processInfo(unmarked.pid!)).not.toBeNull();
  });

  it.skipIf(process.platform !== 'linux')('spares a process that started before the recorded leader (the number was reused)', async () => {
    const older = await sleeper({ [PLUGIN_INSTANCE_ENV]: 'start-8' });
    const recorded = group(older, 'start-8', processInfo(older.pid!)!.startTicks + 1);
    expect(survivorsOf(recorded, systemProcesses.list()!, systemProcesses.environ)).toEqual({ ours: [], spared: 1 });
  });

  it('kills nothing after a reboot, nor where there is no /proc to check', () => {
    const open = { plugin: 'p', pid: 4242, startTicks: 1, bootId: 'boot-a', instance: 'i' };
    const killed: number[] = [];
    const source = (bootId: string | null, hasProc = true) => ({
      bootId: () => bootId,
      list: () => (hasProc ? [{ pid: 4242, pgid: 4242, startTicks: 5 }] : null),
      environ: () => [`${PLUGIN_INSTANCE_ENV}=i`],
      kill: (pid: number) => void killed.push(pid),
    });
    expect(reapProcessGroups([open], source('boot-b'))[0]).toMatchObject({ killed: [], reason: expect.stringContaining('restarted') });
    expect(reapProcessGroups([open], source('boot-a', false))[0]).toMatchObject({
      killed: [],
      reason: expect.stringContaining('no /proc'),
    });
    expect(killed).toEqual([]);
    expect(reapProcessGroups([open], source('boot-a'))[0]).toMatchObject({ killed: [4242] });
    expect(killed).toEqual([4242]);
  });
});
