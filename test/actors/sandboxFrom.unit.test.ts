/** The sandbox's roots as settings give them: `~` is your home, a relative root is under the data dir. */
import { homedir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { sandboxFrom } from '../../actors/modules/securityModule.ts';

describe('sandbox roots from settings', () => {
  it('takes ~ and ~/… from your home, a relative root from the data dir, an absolute one as it is', () => {
    const { rules } = sandboxFrom({ security: { sandbox: { read: ['~', '~/docs', 'notes', '/srv/shared'], write: ['~/out'] } } }, '/data');
    expect(rules.read).toEqual([homedir(), join(homedir(), 'docs'), '/data/notes', '/srv/shared']);
    expect(rules.write).toEqual([join(homedir(), 'out')]);
  });

  it('keeps a name that only starts with ~ a folder of the data dir', () => {
    expect(sandboxFrom({ security: { sandbox: { read: ['~backup'] } } }, '/data').rules.read).toEqual(['/data/~backup']);
  });
});
