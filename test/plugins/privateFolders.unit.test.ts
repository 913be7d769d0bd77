/**
 * Which of a user's private folders a plugin's sandbox hides, and which folders in them it gives
 * back: those a plugin runs from, the outermost of each; a folder a plugin runs from that holds a
 * private one leaves it shown, said why.
 */
import { mkdtempSync, realpathSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { installRoot, machinePrivateFolders, privateFoldersOf, runtimeFolders } from '../../plugins/host/privateFolders.ts';
import { REPO } from '../support/processes.ts';

describe("a user's private folders, as plugins are kept from them", () => {
  it('keeps the outermost of the folders plugins run from, inside the private folders or not (each is given back read-only)', () => {
    const folders = privateFoldersOf({ homes: ['/h'], others: ['/tmp', '/run/user/7'] }, [
      '/h/tools/node/bin',
      '/h/tools',
      '/usr/bin',
      '/tmp/ci/checkout',
      '/tmp/ci/checkout/node_modules',
    ]);
    expect(folders).toEqual({
      homes: ['/h'],
      others: ['/tmp', '/run/user/7'],
      kept: ['/h/tools', '/usr/bin', '/tmp/ci/checkout'],
      shown: [],
    });
  });

  it('leaves shown, and says why, a private folder that a folder plugins run from holds', () => {
    const folders = privateFoldersOf({ homes: ['/h', '/home/ada'], others: ['/tmp'] }, ['/h', '/usr/bin']);
    expect(folders.homes).toEqual(['/home/ada']);
    expect(folders.kept).toEqual(['/h', '/usr/bin']);
    expect(folders.shown).toEqual(['/h is not hidden from plugins: /h, which they run from, holds it']);
    expect(privateFoldersOf({ homes: ['/h'], others: [] }, ['/']).shown).toEqual([
      '/h is not hidden from plugins: /, which they run from, holds it',
    ]);
  });

  // Red team: with the checkout in /tmp (as CI clones it) and HOME inside it, the home was neither hidden nor said to be shown.
  it('says a private folder inside another is shown when a folder plugins run from holds it', () => {
    const folders = privateFoldersOf({ homes: ['/tmp/ci/checkout/test'], others: ['/tmp'] }, ['/tmp/ci/checkout']);
    expect(folders).toEqual({
      homes: [],
      others: ['/tmp'],
      kept: ['/tmp/ci/checkout'],
      shown: ['/tmp/ci/checkout/test is not hidden from plugins: /tmp/ci/checkout, which they run from, holds it'],
    });
  });

  it('names the temporary folder when it is hidden, so each plugin gets its own', () => {
    expect(privateFoldersOf({ homes: [], others: ['/tmp'], temp: '/tmp' }, []).temp).toBe('/tmp');
    // Held by a folder plugins run from, it is not hidden, and no plugin's TMPDIR.
    expect(privateFoldersOf({ homes: [], others: ['/tmp'], temp: '/tmp' }, ['/']).temp).toBeUndefined();
  });

  it('writes again the file /etc/resolv.conf leads to only when it is in a hidden folder', () => {
    const resolver = '/run/systemd/resolve/stub-resolv.conf';
    expect(privateFoldersOf({ homes: [], others: ['/run'], resolver }, []).resolver).toBe(resolver);
    expect(privateFoldersOf({ homes: [], others: ['/tmp'], resolver }, []).resolver).toBeUndefined();
  });

  it('hides a private folder inside another once, with the outer one ($HOME inside the account home, or in /tmp)', () => {
    expect(privateFoldersOf({ homes: ['/home/ada', '/home/ada/alt'], others: [] }, [])).toMatchObject({ homes: ['/home/ada'] });
    expect(privateFoldersOf({ homes: ['/tmp/home'], others: ['/tmp'] }, [])).toMatchObject({ homes: [], others: ['/tmp'] });
  });

  // Red team: with the daemon's TMPDIR outside /tmp, a plugin could write the daemon's own tsx cache there.
  it("counts the daemon's TMPDIR among the private folders, wherever it is", () => {
    const before = process.env.TMPDIR;
    const daemonTemp = mkdtempSync(join('/var/tmp', 'hologram-test-'));
    try {
      process.env.TMPDIR = daemonTemp;
      expect(machinePrivateFolders().others).toContain(realpathSync(daemonTemp));
    } finally {
      if (before === undefined) delete process.env.TMPDIR;
      else process.env.TMPDIR = before;
      rmSync(daemonTemp, { recursive: true, force: true });
    }
  });

  it('runs plugins from the daemon install, Node’s own folder and tsx’s', () => {
    expect(installRoot()).toBe(REPO.replace(/\/$/, ''));
    const runtime = runtimeFolders();
    expect(runtime).toContain(realpathSync(REPO));
    expect(runtime).toContain(realpathSync(dirname(process.execPath)));
    expect(runtime.some((folder) => folder.endsWith('node_modules'))).toBe(true);
  });
});
