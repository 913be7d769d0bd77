/**
 * A plugin's spawn the machine refuses for want of room (its user's processes or descriptors, or
 * memory) is said as that, to be tried again, not as an entry to fix: a red team's plugin used up
 * its user's processes, and every other plugin was refused for good, told to check its manifest.
 */
import { describe, expect, it } from 'vitest';
import { finished, REPO } from '../support/processes.ts';
import { spawn } from 'node:child_process';

describe('a plugin spawn out of room', () => {
  it('is refused as the machine being out of room for now, naming what ran out', async () => {
    const run = await finished(
      spawn('prlimit', ['--nofile=64:64', process.execPath, '--import', 'tsx', 'test/fixtures/spawnOutOfFiles.ts'], { cwd: REPO }),
    );
    expect(run.stderr).toBe('');
    expect(run.stdout).toMatch(
      /^PLUGIN_SPAWN_OUT_OF_ROOM plugin 'crowded' could not be started now: the system refused a new process \(EMFILE: /,
    );
    expect(run.stdout).toContain('it is tried again');
  });
});
