/** The daemon as a user starts it: start, stop with a signal, read the log, replay it. */
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { finished, HOMED, runHomed, spawnNode, waitForLine } from '../support/processes.ts';
import { useTempDir } from '../support/tempDir.ts';

const tempDir = useTempDir();

const typesOf = (jsonLines: string) =>
  jsonLines
    .trim()
    .split('\n')
    .map((line) => (JSON.parse(line) as { type: string }).type);

describe('homed', () => {
  for (const signal of ['SIGTERM', 'SIGINT'] as const) {
    it(`starts on a data dir, prints its layers, and stops cleanly on ${signal} with every event on disk`, async () => {
      const dir = join(tempDir(), 'data');
      const daemon = spawnNode([HOMED, '--data', dir]);
      const done = finished(daemon);
      const output = await waitForLine(daemon, /ready, log at seq \d+/);
      expect(output).toContain('layer 0  config');
      expect(output).toContain('layer 1  projections, security\nlayer 2  llm, scheduler');
      daemon.kill(signal);
      const result = await done;
      expect(result.code).toBe(0);
      expect(result.stdout).toContain('every acknowledged event is on disk');

      const log = await runHomed(['log', '--data', dir, '--stream', 'kernel']);
      expect(log.code).toBe(0);
      const types = typesOf(log.stdout);
      // Layers of 1, 2, 2, 1, 1, 1 and 1 modules: each but the last is followed by the next one's start.
      const starts = [1, 2, 2, 1, 1, 1, 1].flatMap((n, i) => [
        ...Array(n).fill('ModuleStarted'),
        ...(i < 6 ? ['LayerStartRequested'] : []),
      ]);
      expect(types.filter((t) => t !== 'InputDelivered')).toEqual([
        'KernelStarted',
        'LayerStartRequested',
        ...starts,
        ...Array(9).fill(['ModuleStopRequested', 'ModuleStopped']).flat(),
        'KernelStopped',
      ]);
      // Every message is journaled with the facts it caused: the boot, 9 readies, the stop, 9 stops.
      expect(types.filter((t) => t === 'InputDelivered')).toHaveLength(20);
      expect(types[0]).toBe('InputDelivered');
      expect(log.stdout).toContain(`"reason":"received ${signal}"`);

      const verify = await runHomed(['replay', '--data', dir, '--verify']);
      expect(verify.stdout).toContain('kernel: match');
      expect(verify.stdout).toContain('kernel: 1 of 1 journals match');
      expect(verify.code).toBe(0);
    });
  }

  it('keeps the log across restarts and catches projections up on start', async () => {
    const dir = join(tempDir(), 'data');
    for (let run = 0; run < 2; run++) {
      const daemon = spawnNode([HOMED, '--data', dir]);
      const done = finished(daemon);
      await waitForLine(daemon, /ready/);
      daemon.kill('SIGTERM');
      expect((await done).code).toBe(0);
    }
    const log = await runHomed(['log', '--data', dir, '--type', 'KernelStarted']);
    expect(typesOf(log.stdout)).toEqual(['KernelStarted', 'KernelStarted']);
    const range = await runHomed(['log', '--data', dir, '--from', '2', '--to', '3']);
    expect(
      range.stdout
        .trim()
        .split('\n')
        .map((l) => (JSON.parse(l) as { seq: number }).seq),
    ).toEqual([2, 3]);
    const secondStart = (JSON.parse(log.stdout.trim().split('\n')[1]!) as { seq: number }).seq;
    const state = await runHomed(['replay', '--data', dir, '--until', String(secondStart)]);
    const dump = JSON.parse(state.stdout) as { seq: number; projections: { kernel: { kernel_runs: unknown[] } } };
    expect(dump.seq).toBe(secondStart);
    expect(dump.projections.kernel.kernel_runs).toHaveLength(2);
  });

  it('boots again after SIGKILL left a boot without KernelStopped, and replays both boots', async () => {
    const dir = join(tempDir(), 'data');
    const killed = spawnNode([HOMED, '--data', dir]);
    const killedExit = finished(killed);
    await waitForLine(killed, /ready/);
    killed.kill('SIGKILL');
    expect((await killedExit).signal).toBe('SIGKILL');
    const daemon = spawnNode([HOMED, '--data', dir]);
    const done = finished(daemon);
    await waitForLine(daemon, /ready/);
    daemon.kill('SIGTERM');
    expect((await done).code).toBe(0);
    const log = await runHomed(['log', '--data', dir, '--stream', 'kernel', '--type', 'KernelStarted', '--type', 'KernelStopped']);
    expect(typesOf(log.stdout)).toEqual(['KernelStarted', 'KernelStarted', 'KernelStopped']);
    const verify = await runHomed(['replay', '--data', dir, '--verify']);
    expect(verify.stdout).toContain('kernel: 2 of 2 journals match');
    expect(verify.code).toBe(0);
  });

  it('prints the module layers and a help that names every command', async () => {
    const graph = await runHomed(['graph']);
    expect(graph.stdout).toMatch(/^layer 0 {2}config\nlayer 1 {2}projections, security\nlayer 2 {2}llm, scheduler\n/);
    // --data changes nothing there, and is taken as every command takes it; a typo is refused.
    expect((await runHomed(['graph', '--data', 'anywhere'])).stdout).toBe(graph.stdout);
    const typo = await runHomed(['graph', '--dat', 'x']);
    expect(typo.code).toBe(2);
    expect(typo.stderr).toBe("homed: unknown option --dat; did you mean --data?\nRun 'homed graph --help' for usage.\n");
    // A usage error of the daemon itself, or of no command, points at the whole help.
    expect((await runHomed(['--dat', 'x'])).stderr).toMatch(/Run 'homed --help' for usage\.\n$/);
    expect((await runHomed(['frob'])).stderr).toMatch(/Run 'homed --help' for usage\.\n$/);
    const help = await runHomed(['--help']);
    expect(help.code).toBe(0);
    for (const command of ['run', 'log', 'replay', 'graph', '--data', '--verify', '--until']) expect(help.stdout).toContain(command);
    // `homed run --help` is run's own help, a screen, as every command's is.
    const runHelp = await runHomed(['run', '--help']);
    expect(runHelp.code).toBe(0);
    expect(runHelp.stdout).toMatch(/^Usage: homed \[run\] \[--data DIR\]/);
    expect(runHelp.stdout).toContain('--inspect-port N');
    expect(runHelp.stdout.split('\n').length).toBeLessThan(20);
  });

  it('the bin is runnable as installed (shebang, executable bit)', async () => {
    const result = await finished(spawn(HOMED, ['graph'], { stdio: ['ignore', 'pipe', 'pipe'] }));
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('layer 0');
  });
});
