import { describe, expect, it } from 'vitest';
import { DISK_CHECK_MS, DiskReserve, type ReserveHolder, SETTLE_CHECK_MS } from '../../plugins/host/diskReserve.ts';
import { createVirtualTime } from '../support/virtualTime.ts';

const MB = 1024 * 1024;
const RESERVE = 256 * MB;

/** A disk whose free bytes the test sets, and plugins on it: what each one's folder holds and what its stop frees. */
const world = (free: number | Error) => {
  const time = createVirtualTime(0);
  const disk = { free, looks: 0 };
  const lines: string[] = [];
  const stopped: { plugin: string; why: Promise<string> }[] = [];
  const reserve = new DiskReserve({
    folder: '/data',
    reserveBytes: RESERVE,
    timers: time.timers,
    freeBytes: async () => {
      disk.looks++;
      if (disk.free instanceof Error) throw disk.free;
      return disk.free;
    },
    log: (line) => lines.push(line),
  });
  const plugin = (name: string, holds: number | Error, frees: number, over?: string): ReserveHolder => {
    const holder: ReserveHolder = {
      plugin: name,
      measure: async () => {
        if (holds instanceof Error) throw holds;
        return { bytes: holds, over };
      },
      stopFor: async (why) => {
        stopped.push({ plugin: name, why });
        if (typeof disk.free === 'number') disk.free += frees;
      },
    };
    reserve.hold(holder);
    return holder;
  };
  /** Moves time on a check at a time, letting each look finish, until `done` (or a bound of steps). */
  const runUntil = async (done: () => boolean, steps = 200): Promise<void> => {
    for (let i = 0; i < steps && !done(); i++) {
      await new Promise((resolve) => setImmediate(resolve));
      time.advance(SETTLE_CHECK_MS);
    }
  };
  const faults = async () => Promise.all(stopped.map(async ({ plugin, why }) => [plugin, await why] as const));
  return { time, disk, lines, stopped, reserve, plugin, runUntil, faults };
};

describe("the disk's reserve for the log", () => {
  it('stops the plugin counted largest first and no other once the disk has the reserve again, saying what its stop freed', async () => {
    const w = world(100 * MB);
    w.plugin('notes', 1 * MB, 0);
    w.plugin('hog', 900 * MB, 600 * MB);
    w.plugin('weather', 0, 0);
    await w.runUntil(() => w.stopped.length > 0);
    // Looked at again and again after, with the reserve there, no other is stopped.
    await w.runUntil(() => false, 40);
    expect(w.stopped.map((s) => s.plugin)).toEqual(['hog']);
    expect(await w.faults()).toEqual([
      [
        'hog',
        'the disk of the data dir had less than 256 MB free (security.sandbox.diskReserveMb, kept for the log), so homed stopped it, which freed 600 MB',
      ],
    ]);
    expect(w.lines).toEqual([]);
    // Its stop freed room: it is not started again by itself, until the owner starts it.
    expect(w.reserve.chargeOf('hog')).toBe(
      'its last run took room the log needs on the disk of the data dir: stopping it freed 600 MB (files it held open, or wrote outside its state folder)',
    );
    expect(w.reserve.chargeOf('notes')).toBeUndefined();
    w.reserve.pardon('hog');
    expect(w.reserve.chargeOf('hog')).toBeUndefined();
  });

  it('stops plugins one at a time until the one filling the disk, and says of the others that they were not what filled it', async () => {
    const w = world(100 * MB);
    w.plugin('notes', 1 * MB, 0);
    // Hidden from its folder's count (a removed file it maps): its folder holds nothing.
    w.plugin('hog', 0, 600 * MB);
    w.plugin('weather', 0, 0);
    // A folder that cannot be measured counts as the largest.
    w.plugin('locked', new Error('EACCES'), 0);
    await w.runUntil(() => w.stopped.some((s) => s.plugin === 'hog'));
    // The largest first, then the latest held among equals.
    expect(w.stopped.map((s) => s.plugin)).toEqual(['locked', 'notes', 'weather', 'hog']);
    const faults = Object.fromEntries(await w.faults());
    expect(faults.notes).toMatch(/so homed stopped it, which freed less than 1 MB: it was not what filled that disk$/);
    expect(faults.weather).toMatch(/which freed less than 1 MB: it was not what filled that disk$/);
    expect(faults.hog).toMatch(/so homed stopped it, which freed 600 MB$/);
    expect(['locked', 'notes', 'weather', 'hog'].map((p) => w.reserve.chargeOf(p) !== undefined)).toEqual([false, false, false, true]);
  });

  it('says when the disk is still short with every plugin stopped, and stops each once', async () => {
    const w = world(100 * MB);
    w.plugin('a', 0, 0);
    w.plugin('b', 0, 10 * MB);
    await w.runUntil(() => w.lines.length > 0);
    expect(w.stopped.map((s) => s.plugin)).toEqual(['b', 'a']);
    expect(Object.fromEntries(await w.faults())).toEqual({
      a: expect.stringMatching(/which freed less than 1 MB: it was not what filled that disk$/),
      b: expect.stringMatching(/which freed 10 MB$/),
    });
    expect(w.lines).toEqual([
      'plugins: the disk of the data dir had less than 256 MB free (security.sandbox.diskReserveMb, kept for the log) and still has 110 MB ' +
        "free with every subprocess plugin stopped; something else is filling it: free room on that disk, then start them with 'homed plugins start NAME'",
    ]);
  });

  it('counts a disk it cannot measure as short, and says the freed room could not be measured', async () => {
    const w = world(Object.assign(new Error('statfs failed'), { code: 'EIO' }));
    w.plugin('a', 0, 0);
    await w.runUntil(() => w.lines.length > 0);
    expect(await w.faults()).toEqual([
      [
        'a',
        'the disk of the data dir had less than 256 MB free (security.sandbox.diskReserveMb, kept for the log), so homed stopped it; how much that freed could not be measured',
      ],
    ]);
    expect(w.lines[0]).toContain('still has an unmeasured amount free');
  });

  it('looks at the disk only while a plugin is held, once every DISK_CHECK_MS, and stops nothing while it has the reserve', async () => {
    const w = world(RESERVE);
    expect(w.time.armed).toBe(0);
    const held = w.reserve.hold({ plugin: 'a', measure: async () => ({ bytes: 0 }), stopFor: async () => undefined });
    expect(w.time.armed).toBe(1);
    for (let i = 0; i < 8; i++) {
      w.time.advance(DISK_CHECK_MS);
      await new Promise((resolve) => setImmediate(resolve));
    }
    expect(w.disk.looks).toBe(8);
    expect(w.stopped).toEqual([]);
    held.release();
    w.time.advance(DISK_CHECK_MS);
    await new Promise((resolve) => setImmediate(resolve));
    // Released, no plugin is left to keep the disk for: it is not looked at again, and no check is armed.
    expect(w.disk.looks).toBe(8);
    expect(w.time.armed).toBe(0);
    w.reserve.close();
  });

  it('stops a plugin whose folder is over its quota first, with the quota as why, and says that folder is what fills the disk', async () => {
    const w = world(100 * MB);
    w.plugin('notes', 1 * MB, 0);
    w.plugin('hog', 180 * MB, 0, 'its state folder holds more than 40 MB (security.sandbox.pluginStateMb)');
    await w.runUntil(() => w.lines.length > 0);
    expect(w.stopped.map((s) => s.plugin)).toEqual(['hog', 'notes']);
    expect(Object.fromEntries(await w.faults())).toEqual({
      hog: 'its state folder holds more than 40 MB (security.sandbox.pluginStateMb), so homed stopped it',
      notes: expect.stringMatching(/it was not what filled that disk$/),
    });
    expect(w.lines[0]).toContain(
      "with every subprocess plugin stopped; the state folder of 'hog' holds more than its quota (security.sandbox.pluginStateMb): remove what it does not need there, then start them with 'homed plugins start NAME'",
    );
  });
});
