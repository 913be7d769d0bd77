import { spawn, spawnSync } from 'node:child_process';
import { closeSync, linkSync, mkdirSync, openSync, symlinkSync, unlinkSync, writeFileSync, writeSync } from 'node:fs';
import { readdir, readlink } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  checkStateQuota,
  diskShort,
  overQuota,
  PluginStateOverQuota,
  STATE_CHECK_MS,
  stateQuotaOf,
  stateUsage,
  watchStateQuota,
} from '../../plugins/host/stateQuota.ts';
import { processTree } from '../../plugins/host/processTable.ts';
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
    const usage = await stateUsage(folder, stateQuotaOf({ megabytes: 100 }));
    expect(usage.entries).toBe(6);
    expect(usage.bytes).toBeGreaterThanOrEqual(192 * KB);
    expect(usage.bytes).toBeLessThan(1024 * KB);
  });

  it('says a folder is over when it holds more bytes or more entries than its quota, and stops counting there', async () => {
    const folder = tempDir();
    fill(join(folder, 'one'), 1536);
    expect(overQuota(await stateUsage(folder, stateQuotaOf({ megabytes: 1 })), stateQuotaOf({ megabytes: 1 }))).toBe(
      'its state folder holds more than 1 MB (security.sandbox.pluginStateMb)',
    );
    expect(overQuota(await stateUsage(folder, stateQuotaOf({ megabytes: 2 })), stateQuotaOf({ megabytes: 2 }))).toBeUndefined();
    const many = tempDir();
    for (let i = 0; i < 30; i++) writeFileSync(join(many, `f${i}`), '');
    const few = stateQuotaOf({ megabytes: 1, entries: 10 });
    const usage = await stateUsage(many, few);
    expect(overQuota(usage, few)).toBe('its state folder holds more than 10 files and folders');
    // Raising the MB would not help: it says what would.
    await expect(checkStateQuota('p', many, few)).rejects.toThrow(
      'remove files it does not need from that folder (the bound on files is not a setting; `find FOLDER -mindepth 1 -delete`',
    );
    expect(usage.bytes).toBe(0);
  });

  it('refuses a start over the quota with the folder and what to do', async () => {
    const folder = tempDir();
    fill(join(folder, 'one'), 1536);
    const refused = checkStateQuota('p', folder, stateQuotaOf({ megabytes: 1 }));
    await expect(refused).rejects.toBeInstanceOf(PluginStateOverQuota);
    await expect(refused).rejects.toThrow(
      `plugin 'p' was not started: its state folder holds more than 1 MB (security.sandbox.pluginStateMb), ${folder}; ` +
        'remove what it does not need from that folder',
    );
    await expect(checkStateQuota('p', tempDir(), stateQuotaOf({ megabytes: 1 }))).resolves.toBeUndefined();
  });

  it('watches a running plugin from the processes under it: says it is over once, at the first count after it grew', async () => {
    const folder = tempDir();
    const time = createVirtualTime(0);
    const over: string[] = [];
    const watch = watchStateQuota(folder, stateQuotaOf({ megabytes: 1 }), process.pid, time.timers, (why) => over.push(why));
    // One count at a time, armed again once it has looked.
    expect(time.armed).toBe(1);
    time.advance(STATE_CHECK_MS);
    await expect.poll(() => time.armed).toBe(1);
    expect(over).toEqual([]);
    fill(join(folder, 'grown'), 1536);
    time.advance(STATE_CHECK_MS);
    await expect.poll(() => over).toEqual(['its state folder holds more than 1 MB (security.sandbox.pluginStateMb)']);
    // Said once: nothing more is looked at.
    expect(time.armed).toBe(0);
    watch.stop();

    const stopped: string[] = [];
    const watching = watchStateQuota(tempDir(), stateQuotaOf({ megabytes: 1 }), process.pid, time.timers, (why) => stopped.push(why));
    expect(time.armed).toBe(1);
    watching.stop();
    expect(time.armed).toBe(0);
    expect(stopped).toEqual([]);
  });

  it('counts a file removed but held open by a process under the plugin, and each file once however many links it has', async () => {
    const folder = tempDir();
    const held = openSync(join(folder, 'held'), 'w');
    try {
      writeSync(held, Buffer.alloc(1536 * KB, 'x'));
      unlinkSync(join(folder, 'held'));
      expect(overQuota(await stateUsage(folder, stateQuotaOf({ megabytes: 1 })), stateQuotaOf({ megabytes: 1 }))).toBeUndefined();
      const usage = await stateUsage(folder, stateQuotaOf({ megabytes: 1 }), await processTree(process.pid));
      expect(usage.bytes).toBeGreaterThanOrEqual(1536 * KB);
      // Held, what stopping the process frees.
      expect(usage.held).toBeGreaterThanOrEqual(1536 * KB);
    } finally {
      closeSync(held);
    }
    const linked = tempDir();
    fill(join(linked, 'one'), 700);
    for (let i = 0; i < 4; i++) linkSync(join(linked, 'one'), join(linked, `link${i}`));
    expect(overQuota(await stateUsage(linked, stateQuotaOf({ megabytes: 1 })), stateQuotaOf({ megabytes: 1 }))).toBeUndefined();
  });

  // A red team's plugin mapped a removed file and closed its descriptor: no open file showed it, and it was charged to another.
  it('counts a file removed and held only as a memory mapping, once, as held', async () => {
    const folder = tempDir();
    const script = [
      'import ctypes, os, sys',
      'libc = ctypes.CDLL(None)',
      'libc.mmap.restype = ctypes.c_void_p',
      'libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_long]',
      'size = 2 * 1024 * 1024',
      `path = ${JSON.stringify(join(folder, 'mapped'))}`,
      'fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)',
      'os.ftruncate(fd, size)',
      'area = libc.mmap(None, size, 3, 1, fd, 0)',
      'os.close(fd)',
      'os.unlink(path)',
      'ctypes.memset(area, 0x6d, size)',
      'print("ready", flush=True)',
      'sys.stdin.read()',
    ].join('\n');
    const child = spawn('python3', ['-c', script], { stdio: ['pipe', 'pipe', 'inherit'] });
    try {
      await new Promise((resolve) => child.stdout!.once('data', resolve));
      // No descriptor leads to it: only the mapping holds it.
      const targets = await Promise.all(
        (await readdir(`/proc/${child.pid}/fd`)).map((fd) => readlink(`/proc/${child.pid}/fd/${fd}`).catch(() => '')),
      );
      expect(targets.filter((target) => target.startsWith(folder))).toEqual([]);
      const usage = await stateUsage(folder, stateQuotaOf({ megabytes: 64 }), [child.pid!]);
      expect(usage.held).toBe(usage.bytes);
      expect(usage.bytes).toBeGreaterThanOrEqual(2 * 1024 * KB);
      expect(usage.bytes).toBeLessThan(3 * 1024 * KB);
    } finally {
      child.stdin!.end();
      child.kill();
    }
  });

  it('counts a plugin whose processes hold more open files than a count looks through as full', async () => {
    const folder = tempDir();
    const quota = stateQuotaOf({ megabytes: 1, openFiles: 2 });
    const held = [0, 1, 2].map((i) => openSync(join(folder, `f${i}`), 'w'));
    try {
      const usage = await stateUsage(folder, quota, [process.pid]);
      expect(usage.unmeasured).toBe('its processes hold more than 2 open files');
      expect(overQuota(usage, quota)).toBe(
        'its state folder could not be measured (its processes hold more than 2 open files), so it counts as full',
      );
    } finally {
      for (const fd of held) closeSync(fd);
    }
  });

  // Root reads every process's descriptors: the daemon run as a user of its own meets one it may not read.
  it.skipIf(process.getuid?.() === 0)('counts as full a process whose open files it may not read', async () => {
    const usage = await stateUsage(tempDir(), stateQuotaOf({ megabytes: 1 }), [1]);
    expect(usage.unmeasured).toBe('EACCES at the open files of its process 1');
  });

  it('says when the disk of the state folder has less free than the reserve kept for the log', async () => {
    const folder = tempDir();
    expect(await diskShort(folder, stateQuotaOf({ megabytes: 1, reserveMegabytes: 0 }))).toBeUndefined();
    // 1 TiB: more than this machine's disk has free.
    const short = stateQuotaOf({ megabytes: 1, reserveMegabytes: 1_048_576 });
    const why =
      'the disk its state folder is on has less than 1048576 MB free (security.sandbox.diskReserveMb), ' +
      'kept for the log: plugins writing there are stopped while it has less';
    expect(await diskShort(folder, short)).toBe(why);
    await expect(checkStateQuota('p', folder, short)).rejects.toThrow(
      `plugin 'p' was not started: ${why}, ${folder}; free room on that disk (or lower security.sandbox.diskReserveMb`,
    );
  });

  it('counts a folder it cannot read through as full, naming where, its path cut short', async () => {
    const folder = tempDir();
    // Deeper than a path may be (PATH_MAX), made as a plugin would: a folder at a time, from where the last one is.
    const step = 'd'.repeat(250);
    const made = spawnSync(process.execPath, [
      '-e',
      `const fs = require('node:fs'); process.chdir(${JSON.stringify(folder)}); ` +
        `for (let i = 0; i < 20; i++) { fs.mkdirSync('${step}'); process.chdir('${step}'); } fs.writeFileSync('f', 'x');`,
    ]);
    expect(made.status, made.stderr.toString()).toBe(0);
    try {
      const usage = await stateUsage(folder, stateQuotaOf({ megabytes: 100 }));
      expect(usage.unmeasured).toBe(`ENAMETOOLONG at ${'d'.repeat(120)}…`);
      expect(overQuota(usage, stateQuotaOf({ megabytes: 100 }))).toBe(
        `its state folder could not be measured (ENAMETOOLONG at ${'d'.repeat(120)}…), so it counts as full`,
      );
      await expect(checkStateQuota('p', folder, stateQuotaOf({ megabytes: 100 }))).rejects.toThrow('could not be measured (ENAMETOOLONG');
    } finally {
      // Removed as a person would: Node's own removal builds the same paths, too long.
      spawnSync('rm', ['-rf', join(folder, step)]);
    }
  });
});
