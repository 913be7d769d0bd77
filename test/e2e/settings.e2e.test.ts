/**
 * A settings.json with mistakes: homed does not start, and says in one message every key that
 * is wrong and what it should be, without a stack trace. Fixed, it starts.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { useDaemons } from '../support/homedSession.ts';
import { hasNoStackTrace, runHomed } from '../support/processes.ts';
import { useTempDir } from '../support/tempDir.ts';

const tempDir = useTempDir();
const daemons = useDaemons();

describe('settings.json with mistakes', () => {
  it('is refused at start with every problem named by its key, and accepted once fixed', async () => {
    const dir = join(tempDir(), 'data');
    mkdirSync(dir);
    const settings = join(dir, 'settings.json');
    // A heartbeat every 6e-8 ms would fire on every look and fill the log; 1e309 reads as Infinity.
    writeFileSync(
      settings,
      '{"memroy": {}, "scheduler": {"preemptCooldownMs": "2s"}, "llm": {"maxRounds": -1}, ' +
        '"memory": {"heartbeats": {"rulesMinutes": 1e-9, "mergeMinutes": 1e309}}}',
    );
    const start = await runHomed(['run', '--data', dir]);
    expect(start.code).toBe(1);
    expect(start.stderr).toContain('has 5 problems');
    expect(start.stderr).toContain('memory.heartbeats.rulesMinutes: must be at least 0.01, got 1e-9');
    expect(start.stderr).toContain('memory.heartbeats.mergeMinutes: must be a number, got Infinity (a number too large)');
    expect(start.stderr).toContain('memroy: is not a setting; did you mean memory?');
    expect(start.stderr).toContain('scheduler.preemptCooldownMs: must be a number, got "2s"');
    expect(start.stderr).toContain('llm.maxRounds: must be at least 1, got -1');
    expect(hasNoStackTrace(start.stderr)).toBe(true);

    const replay = await runHomed(['replay', '--data', dir, '--verify']);
    expect(replay.code).toBe(1);
    expect(replay.stderr).toContain('memroy: is not a setting');

    writeFileSync(settings, JSON.stringify({ memory: {}, scheduler: { preemptCooldownMs: 2000 }, llm: { maxRounds: 4 } }));
    await daemons.stop(await daemons.start(dir));
  });

  it.each([
    ['settings.json', 'a folder', (path: string) => mkdirSync(path)],
    ['settings.json', 'a FIFO', (path: string) => execFileSync('mkfifo', [path])],
    ['persona.md', 'a FIFO', (path: string) => execFileSync('mkfifo', [path])],
  ])('(or %s) that is %s is refused at start in one line, not waited on', async (file, _what, put) => {
    const dir = join(tempDir(), 'data');
    mkdirSync(dir);
    put(join(dir, file));
    const start = await runHomed(['run', '--data', dir]);
    expect(start.code).toBe(1);
    expect(start.stderr).toContain(`${join(dir, file)} is not a regular file (a folder, a FIFO or a device is not read)`);
    expect(hasNoStackTrace(start.stderr)).toBe(true);
  });
});
