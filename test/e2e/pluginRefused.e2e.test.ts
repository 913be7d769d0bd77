/**
 * A plugin folder the start refuses (a manifest with a mistake) is recorded with why, so a person
 * who missed the start's output finds it where they look for the plugin: `homed plugins`, live
 * and from the log once homed stopped. Fixed, the next start lists it no more.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { logOf, testDataDir, useDaemons, verifyReplay } from '../support/homedSession.ts';
import { runHomed } from '../support/processes.ts';
import { useTempDir } from '../support/tempDir.ts';

const tempDir = useTempDir();
const daemons = useDaemons();

const manifest = (capabilitiesKey: string) =>
  JSON.stringify({ name: 'typo', version: '1.0.0', entry: 'main.js', [capabilitiesKey]: ['tools'] });

describe('a refused plugin folder', () => {
  it('is listed by homed plugins with why, live and from the log, until a start loads it', async () => {
    const dir = testDataDir(tempDir());
    const folder = join(dir, 'plugins', 'typo');
    mkdirSync(folder);
    writeFileSync(join(folder, 'main.js'), '');
    writeFileSync(join(folder, 'plugin.json'), manifest('capabilites'));
    const daemon = await daemons.start(dir);
    // On homed's output, one plain line: no ⏎ where the reason's lines were.
    expect(daemon.output).toMatch(
      /^homed: plugin refused: .*invalid plugin manifest \(1 problem\): unknown key "capabilites" .*; fix the manifest and restart homed/m,
    );
    const live = await runHomed(['plugins', '--data', dir]);
    expect(live.code, live.stderr).toBe(0);
    // Refused, not disabled: nothing of it runs, and what to do is said once.
    expect(live.stdout).toMatch(/^typo\s+-\s+refused\s+restarts 0$/m);
    expect(live.stdout).toContain('unknown key "capabilites" (did you mean "capabilities"?)');
    expect(live.stdout.match(/restart homed/g)).toHaveLength(1);
    // Asked to start it, homed says it was refused and why, not that there is no such plugin.
    const start = await runHomed(['plugins', 'start', 'typo', '--data', dir]);
    expect(start.code).toBe(1);
    expect(start.stderr).toMatch(
      /^homed: the plugin folder 'typo' was refused when homed started: .*plugin\.json: invalid plugin manifest/,
    );
    expect(start.stderr).toContain('unknown key "capabilites" (did you mean "capabilities"?)');
    expect(start.stderr.match(/restart homed/g)).toHaveLength(1);
    await daemons.stop(daemon);
    const offline = await runHomed(['plugins', '--data', dir]);
    expect(offline.stdout).toContain('unknown key "capabilites" (did you mean "capabilities"?)');

    writeFileSync(join(folder, 'plugin.json'), manifest('capabilities'));
    const fixed = await daemons.start(dir);
    await daemons.stop(fixed);
    const after = await runHomed(['plugins', '--data', dir]);
    expect(after.stdout).not.toContain('refused');
    expect((await logOf(dir, '--type', 'PluginsRefused')).map((e) => (e.data.refused as unknown[]).length)).toEqual([1, 0]);
    await verifyReplay(dir);
  });
});
