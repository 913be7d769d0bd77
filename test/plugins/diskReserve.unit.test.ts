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
  /**
   * A plugin: what its folder holds in files (`bytes`), what it holds removed but open or mapped
   * (`held`, by default what its stop frees), what its stop frees, and why it is over its quota.
   */
  const plugin = (
    name: string,
    shape: Readonly<{ bytes?: number; held?: number; frees?: number; over?: string }> | Error,
  ): ReserveHolder => {
    const { bytes = 0, frees = 0, over } = shape instanceof Error ? {} : shape;
    const held = shape instanceof Error ? 0 : (shape.held ?? frees);
    const holder: ReserveHolder = {
      plugin: name,
      measure: async () => {
        if (shape instanceof Error) throw shape;
        return { bytes: bytes + held, held, over };
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
  it('stops the plugin seen holding most first and no other once the disk has the reserve again, saying what its stop freed', async () => {
    const w = world(100 * MB);
    w.plugin('notes', { bytes: 1 * MB });
    w.plugin('hog', { bytes: 300 * MB, frees: 600 * MB });
    w.plugin('weather', {});
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

  it('stops plugins one at a time until the disk has the reserve, and charges none with room it was not seen to hold', async () => {
    const w = world(100 * MB);
    w.plugin('notes', { bytes: 1 * MB });
    // Holding room past every measure (a removed file passed over a socket): its folder and its processes show nothing.
    w.plugin('hog', { frees: 600 * MB, held: 0 });
    w.plugin('weather', {});
    // A folder that cannot be measured counts as the largest.
    w.plugin('locked', new Error('EACCES'));
    await w.runUntil(() => w.stopped.some((s) => s.plugin === 'hog'));
    // Most held first, then the most in files, then the latest held among equals.
    expect(w.stopped.map((s) => s.plugin)).toEqual(['locked', 'notes', 'weather', 'hog']);
    const faults = Object.fromEntries(await w.faults());
    expect(faults.notes).toMatch(/so homed stopped it, which freed less than 1 MB: it was not what filled that disk$/);
    expect(faults.weather).toMatch(/which freed less than 1 MB: it was not what filled that disk$/);
    expect(faults.hog).toMatch(/so homed stopped it; the disk gained 600 MB meanwhile, though homed saw it hold none of that$/);
    expect(['locked', 'notes', 'weather', 'hog'].map((p) => w.reserve.chargeOf(p))).toEqual([undefined, undefined, undefined, undefined]);
  });

  // A red team's plugin hid 100 MB in a mapping and gave it back just as homed stopped another, which was charged with it.
  it('does not charge a plugin with room another gave back while it stopped', async () => {
    const w = world(100 * MB);
    w.plugin('racer', { held: 0 });
    w.plugin('innocent', { bytes: 20 * MB, held: 0, frees: 200 * MB });
    await w.runUntil(() => w.stopped.length > 0);
    expect(w.stopped.map((s) => s.plugin)).toEqual(['innocent']);
    expect(await w.faults()).toEqual([
      ['innocent', expect.stringMatching(/; the disk gained 200 MB meanwhile, though homed saw it hold none of that$/)],
    ]);
    expect(w.reserve.chargeOf('innocent')).toBeUndefined();
  });

  it('says when the disk is still short with every plugin stopped, and stops each once', async () => {
    const w = world(100 * MB);
    w.plugin('a', {});
    w.plugin('b', { frees: 10 * MB });
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
    w.plugin('a', {});
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
    const held = w.reserve.hold({ plugin: 'a', measure: async () => ({ bytes: 0, held: 0 }), stopFor: async () => undefined });
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
    w.plugin('notes', { bytes: 1 * MB });
    w.plugin('hog', { bytes: 180 * MB, over: 'its state folder holds more than 40 MB (security.sandbox.pluginStateMb)' });
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
