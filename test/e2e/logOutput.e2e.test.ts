/**
 * `homed log` as a user pipes it: every event reaches a slow reader (the output drains before
 * the process exits), a reader that leaves early ends it quietly with 141, and a --type or
 * --stream the log does not have is refused with the closest names instead of an empty listing.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EVENT_LOG_FILE, openEventLog } from '../../cli/dataDir.ts';
import { askSocket, parseLog, testDataDir, useDaemons } from '../support/homedSession.ts';
import { finished, HOMED, REPO, runHomed, spawnNode, WAITER } from '../support/processes.ts';

const daemons = useDaemons();
let root: string;
let dir: string;
let events: number;

/** Runs a bash pipeline in which `homed` is this checkout's homed and `$DIR` the data dir; exits with the first failure (pipefail). */
const pipeline = (script: string) =>
  finished(
    spawn('bash', ['-c', `set -o pipefail; homed() { "$NODE" "$HOMED" "$@"; }; ${script}`], {
      cwd: REPO,
      env: { ...process.env, NODE: process.execPath, HOMED, DIR: dir },
      stdio: ['ignore', 'pipe', 'pipe'],
    }),
  );

beforeAll(async () => {
  // A log of well over 64 KiB: a pipe's buffer, where an exit before the output drained used to cut it.
  root = mkdtempSync(join(tmpdir(), 'hologram-log-'));
  dir = testDataDir(root);
  const daemon = await daemons.start(dir);
  for (let i = 0; i < 6; i++) await askSocket(dir, `message ${i}: ${'lorem ipsum '.repeat(5_000)}`);
  await daemons.stop(daemon);
  const store = openEventLog(join(dir, EVENT_LOG_FILE));
  events = await store.headSeq();
  await store.close();
});

afterAll(() => rmSync(root, { recursive: true, force: true }));

describe('homed log through a pipe', () => {
  it('gives a slow reader every event, in order, and exits 0', async () => {
    const result = await pipeline('homed log --data "$DIR" | (sleep 1; cat)');
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout.length, 'bytes printed').toBeGreaterThan(4 * 64 * 1024);
    const seqs = parseLog(result.stdout).map((event) => event.seq);
    expect(seqs).toHaveLength(events);
    expect(seqs).toEqual(Array.from({ length: events }, (_, i) => i + 1));
  });

  it('ends quietly with 141 when the reader leaves early (homed log | head)', async () => {
    const log = spawnNode([HOMED, 'log', '--data', dir]);
    const done = finished(log);
    log.stdout?.once('data', () => log.stdout?.destroy());
    const result = await done;
    expect(result.code).toBe(141);
    expect(result.stderr).toBe('');
  });
});

describe('homed log filters', () => {
  it('refuses an event type this build does not declare, with the closest names', async () => {
    const unknown = await runHomed(['log', '--data', dir, '--type', 'NoSuchType']);
    expect(unknown.code).toBe(2);
    expect(unknown.stdout).toBe('');
    expect(unknown.stderr).toContain('--type NoSuchType: no event type of that name is declared (every type: homed log --list-types)');
    const typo = await runHomed(['log', '--data', dir, '--type', 'KernelStartd']);
    expect(typo.code).toBe(2);
    expect(typo.stderr).toContain('--type KernelStartd: no event type of that name is declared; did you mean KernelStarted?');
  });

  it('refuses a stream the log does not have, with the closest names; --list-streams lists them', async () => {
    const typo = await runHomed(['log', '--data', dir, '--stream', 'kernl']);
    expect(typo.code).toBe(2);
    expect(typo.stdout).toBe('');
    expect(typo.stderr).toMatch(
      /--stream kernl: the log has no stream of that name; did you mean kernel\b.*\(every stream: homed log --list-streams\)/,
    );
    const streams = await runHomed(['log', '--data', dir, '--list-streams']);
    expect(streams.code).toBe(0);
    expect(streams.stdout).toMatch(/^kernel\t\d+ events\tlast KernelStopped$/m);
    expect(streams.stdout).toMatch(/^scheduler\t\d+ events\tlast \w+$/m);
    const known = await runHomed(['log', '--data', dir, '--stream', 'kernel']);
    expect(known.code).toBe(0);
    const kernel = parseLog(known.stdout);
    expect(kernel.every((event) => event.stream === 'kernel')).toBe(true);
    expect(streams.stdout, 'the listing counts what the log holds').toContain(`kernel\t${kernel.length} events\tlast KernelStopped\n`);
  });
});

describe('exit statuses', () => {
  it('homed --help and waiter --help say what each exit status means', async () => {
    const homed = await runHomed(['--help']);
    const waiter = await finished(spawnNode([WAITER, '--help']));
    for (const help of [homed.stdout, waiter.stdout]) {
      const section = help.slice(help.indexOf('Exit status:'));
      for (const status of [0, 1, 2, 70, 74, 141]) expect(section).toMatch(new RegExp(`^  ${status} +\\S`, 'm'));
      expect(section).toContain('141  the reader of the output went away');
    }
    expect(homed.stdout).toMatch(/^ {2}130 +homed chat stopped with Ctrl-C$/m);
  });
});
