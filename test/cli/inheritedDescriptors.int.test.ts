/**
 * homed closes the descriptors it was started with that stay open across exec, so no plugin
 * inherits them (a red team's homed held a hidden home's file as descriptor 40, and every plugin
 * read it); its own, close-on-exec, it keeps.
 */
import { spawn } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { finished, REPO } from '../support/processes.ts';

const PROBE = `
import { fstatSync, openSync } from 'node:fs';
import { closeInheritedDescriptors } from './cli/inheritedDescriptors.ts';
const own = openSync('/dev/null', 'r');
const closed = closeInheritedDescriptors();
const open = (fd) => { try { fstatSync(fd); return true; } catch { return false; } };
console.log(JSON.stringify({ closed: closed.filter((fd) => fd === 40 || fd === 41), forty: open(40), fortyOne: open(41), own: open(own) }));
`;

describe('descriptors homed was started with', () => {
  it('are closed when open across exec; its own are kept', async () => {
    // Past the first few, which Node makes close-on-exec itself as it starts (a shell opens them as a launcher would).
    const probe = `exec 40</etc/hostname 41</etc/hostname; exec "$0" --import tsx --input-type=module -e "$1"`;
    const run = await finished(spawn('bash', ['-c', probe, process.execPath, PROBE], { cwd: REPO }));
    expect(run.stderr).toBe('');
    expect(JSON.parse(run.stdout)).toEqual({ closed: [40, 41], forty: false, fortyOne: false, own: true });
  });
});
