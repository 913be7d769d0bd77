import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  checkStateQuota,
  overQuota,
  PluginStateOverQuota,
  STATE_CHECK_MS,
  stateQuotaOf,
  stateUsage,
  watchStateQuota,
} from '../../plugins/host/stateQuota.ts';
import { useTempDir } from '../support/tempDir.ts';
import { createVirtualTime } from '../support/virtualTime.ts';

const tempDir = useTempDir();
const KB = 1024;

/** Files that take their size on disk (not sparse). */
const fill = (path: string, kilobytes: number): void => writeFileSync(path, Buffer.alloc(kilobytes * KB, 'x'));

describe("a plugin's state folder usage", () => {
  it('counts what every file and folder takes on disk, in nested folders, and never what a link leads to', async () => {
    const folder = tempDir();
    const outside = tempDir();
    mkdirSync(join(folder, 'a', 'b'), { recursive: true });
    fill(join(folder, 'top'), 64);
    fill(join(folder, 'a', 'b', 'deep'), 128);
    fill(join(outside, 'huge'), 2048);
    symlinkSync(join(outside, 'huge'), join(folder, 'link'));
    symlinkSync(outside, join(folder, 'folder-link'));
    const usage = await stateUsage(folder, stateQuotaOf(100));
    expect(usage.entries).toBe(6);
    expect(usage.bytes).toBeGreaterThanOrEqual(192 * KB);
    expect(usage.bytes).toBeLessThan(1024 * KB);
  });

  it('says a folder is over when it holds more bytes or more entries than its quota, and stops counting there', async () => {
    const folder = tempDir();
    fill(join(folder, 'one'), 1536);
    expect(overQuota(await stateUsage(folder, stateQuotaOf(1)), stateQuotaOf(1))).toBe(
      'its state folder holds more than 1 MB (security.sandbox.pluginStateMb)',
    );
    expect(overQuota(await stateUsage(folder, stateQuotaOf(2)), stateQuotaOf(2))).toBeUndefined();
    const many = tempDir();
    for (let i = 0; i < 30; i++) writeFileSync(join(many, `f${i}`), '');
    const few = stateQuotaOf(1, 10);
    const usage = await stateUsage(many, few);
    expect(overQuota(usage, few)).toBe('its state folder holds more than 10 files and folders');
    expect(usage.bytes).toBe(0);
  });

  it('refuses a start over the quota with the folder and what to do', async () => {
    const folder = tempDir();
    fill(join(folder, 'one'), 1536);
    const refused = checkStateQuota('p', folder, stateQuotaOf(1));
    await expect(refused).rejects.toBeInstanceOf(PluginStateOverQuota);
    await expect(refused).rejects.toThrow(
      `plugin 'p' was not started: its state folder holds more than 1 MB (security.sandbox.pluginStateMb), ${folder}; ` +
        'remove what it does not need from that folder',
    );
    await expect(checkStateQuota('p', tempDir(), stateQuotaOf(1))).resolves.toBeUndefined();
  });

  it('watches a running plugin: says it is over once, at the first count after it grew, and not after it is stopped', async () => {
    const folder = tempDir();
    const time = createVirtualTime(0);
    const over: string[] = [];
    const failed: unknown[] = [];
    const watch = watchStateQuota(
      folder,
      stateQuotaOf(1),
      time.timers,
      (why) => over.push(why),
      (e) => failed.push(e),
    );
    // A count within the quota arms the next one once it has read the folder.
    time.advance(STATE_CHECK_MS);
    await expect.poll(() => time.armed).toBe(1);
    expect(over).toEqual([]);
    fill(join(folder, 'grown'), 1536);
    time.advance(STATE_CHECK_MS);
    await expect.poll(() => over).toEqual(['its state folder holds more than 1 MB (security.sandbox.pluginStateMb)']);
    // Said once: no count follows.
    expect(time.armed).toBe(0);
    watch.stop();

    const second = tempDir();
    const stopped: string[] = [];
    const watching = watchStateQuota(
      second,
      stateQuotaOf(1),
      time.timers,
      (why) => stopped.push(why),
      (e) => failed.push(e),
    );
    expect(time.armed).toBe(1);
    watching.stop();
    expect(time.armed).toBe(0);
    expect(failed).toEqual([]);
  });
});
