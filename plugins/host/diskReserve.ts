/**
 * The room kept free on the data dir's disk for the log (`security.sandbox.diskReserveMb`),
 * looked at once for every running subprocess plugin: what a plugin hides from its state folder's
 * count (a removed file it passes to itself over a socket) still takes that disk. When the disk
 * has less free than the reserve, the plugins are stopped one at a time, the one seen holding most
 * removed files (open or mapped) first, then the one whose folder holds most, and the disk is
 * looked at again after each, until it has the reserve again: the plugin filling it is stopped,
 * the others go on unless they came before it, and each stopped one's fault says how much its
 * stop freed, so the owner knows which it was. One whose stop freed room it was seen to hold is
 * not started again until the owner starts it (it would fill the disk again, the room kept for the
 * log included); the others restart as after a crash.
 */
import type { Timers } from '../../events/index.ts';

const MB = 1024 * 1024;
/** How often the disk is looked at while a subprocess plugin runs (one statfs): a plugin reserved gigabytes in a tenth of a second. */
export const DISK_CHECK_MS = 250;
/** After a stopped plugin's processes are gone, the disk is looked at this often until what it shows stops changing. */
export const SETTLE_CHECK_MS = 25;
/** The longest a stop's effect on the disk is waited for before the next plugin is stopped (a disk still filling never settles). */
export const SETTLE_AT_MOST_MS = 300;

/** A running subprocess plugin as the reserve sees it. */
export type ReserveHolder = Readonly<{
  plugin: string;
  /**
   * What its state folder holds now, with the files its processes removed but hold open, in bytes
   * (unmeasured: Infinity), and, when that is over its quota, why (as the quota's count says it).
   */
  measure: () => Promise<FolderMeasure>;
  /**
   * Kills its processes with `why` as the fault its exit reports (a promise: how much the stop
   * freed is known only after); resolves once they are all gone.
   */
  stopFor: (why: Promise<string>) => Promise<void>;
}>;

/**
 * What a plugin's state folder holds (`bytes`), of it what its processes removed but hold open or
 * mapped (`held`: what stopping them frees), both Infinity when it cannot be measured, and, when
 * over its quota, why.
 */
export type FolderMeasure = Readonly<{ bytes: number; held: number; over?: string | undefined }>;

export type DiskReserveOptions = Readonly<{
  /** A path on the disk kept for the log (the data dir). */
  folder: string;
  reserveBytes: number;
  timers: Timers;
  /** The bytes free to homed's user on the disk of `folder` (statfs); throws when it cannot be measured. */
  freeBytes: (folder: string) => Promise<number>;
  log: (line: string) => void;
}>;

const megabytes = (bytes: number): string => (bytes < MB ? 'less than 1 MB' : `${Math.round(bytes / MB)} MB`);

/** Why the disk counts as short: the reserve, the setting, and what it is kept for. */
const shortOf = (reserveBytes: number): string =>
  `the disk of the data dir had less than ${reserveBytes / MB} MB free (security.sandbox.diskReserveMb, kept for the log)`;

/** The fault of a plugin the reserve stopped, by what its stop freed and what it was seen to hold. */
export const reserveFault = (reserveBytes: number, freed: number | undefined, held = Number.POSITIVE_INFINITY): string => {
  const short = `${shortOf(reserveBytes)}, so homed stopped it`;
  if (freed === undefined) return `${short}; how much that freed could not be measured`;
  // Room that came back while it stopped, none of it seen held by it, was freed by something else (or a plugin timing it).
  if (freed >= MB && held < MB) return `${short}; the disk gained ${megabytes(freed)} meanwhile, though homed saw it hold none of that`;
  return freed < MB
    ? `${short}, which freed ${megabytes(freed)}: it was not what filled that disk`
    : `${short}, which freed ${megabytes(freed)}`;
};

/** Why a plugin whose stop freed room on the disk is not started again by itself, and what to do. */
export const chargedWith = (freed: number): string =>
  `its last run took room the log needs on the disk of the data dir: stopping it freed ${megabytes(freed)} ` +
  '(files it held open, or wrote outside its state folder)';

export class DiskReserve {
  private readonly holders = new Set<ReserveHolder>();
  /** Plugins whose stop freed room, with why they are not started again until the owner starts them. */
  private readonly charged = new Map<string, string>();
  private timer: unknown;
  private relieving = false;
  private closed = false;

  constructor(private readonly options: DiskReserveOptions) {}

  /** Watches the disk for `holder` until `release` (its processes have ended). */
  hold(holder: ReserveHolder): Readonly<{ release: () => void }> {
    this.holders.add(holder);
    this.arm();
    return { release: () => this.holders.delete(holder) };
  }

  /** Why `plugin` is not started again by itself (its stop freed room on the disk), or undefined. */
  chargeOf(plugin: string): string | undefined {
    return this.charged.get(plugin);
  }

  /** The owner starts `plugin` again: its next start goes ahead. */
  pardon(plugin: string): void {
    this.charged.delete(plugin);
  }

  /** Ends the watch (the host stops). */
  close(): void {
    this.closed = true;
    if (this.timer !== undefined) this.options.timers.clearTimer(this.timer);
    this.timer = undefined;
  }

  private arm(): void {
    if (this.closed || this.timer !== undefined || this.holders.size === 0) return;
    this.timer = this.options.timers.setTimer(() => {
      this.timer = undefined;
      void this.look().finally(() => this.arm());
    }, DISK_CHECK_MS);
  }

  private async free(): Promise<number | undefined> {
    try {
      return await this.options.freeBytes(this.options.folder);
    } catch {
      return undefined;
    }
  }

  private async look(): Promise<void> {
    if (this.relieving || this.holders.size === 0) return;
    const free = await this.free();
    // A disk that cannot be measured counts as short: what homed cannot see, it cannot keep.
    if (free !== undefined && free >= this.options.reserveBytes) return;
    this.relieving = true;
    try {
      await this.relieve(free);
    } finally {
      this.relieving = false;
    }
  }

  /** Stops plugins, the one whose folder holds most first (the latest held among equals), until the disk has the reserve again. */
  private async relieve(freeAtStart: number | undefined): Promise<void> {
    const { reserveBytes, log } = this.options;
    const latestFirst = [...this.holders].reverse();
    const unmeasured: FolderMeasure = { bytes: Number.POSITIVE_INFINITY, held: Number.POSITIVE_INFINITY };
    const sizes = await Promise.all(latestFirst.map((holder) => holder.measure().catch(() => unmeasured)));
    const order = latestFirst.map((holder, i) => ({ holder, ...sizes[i]! })).sort((a, b) => b.held - a.held || b.bytes - a.bytes);
    let free = freeAtStart;
    for (const { holder, over, held } of order) {
      if (!this.holders.has(holder)) continue;
      let told!: (why: string) => void;
      const why = new Promise<string>((resolve) => (told = resolve));
      let after: number | undefined;
      try {
        await holder.stopFor(why);
        this.holders.delete(holder);
        after = await this.settled(free);
      } finally {
        const freed = free === undefined || after === undefined ? undefined : Math.max(0, after - free);
        // Charged only with room it was seen to hold: a plugin giving room back as another stops must not get that one charged.
        if (freed !== undefined && freed >= MB && held >= MB) this.charged.set(holder.plugin, chargedWith(freed));
        // Over its quota, what it wrote stays in its folder after the stop: that, not the room its stop freed, is why.
        told(over === undefined ? reserveFault(reserveBytes, freed, held) : `${over}, so homed stopped it`);
      }
      free = after;
      if (free !== undefined && free >= reserveBytes) return;
    }
    const overQuota = order.filter((o) => o.over !== undefined).map((o) => `'${o.holder.plugin}'`);
    const culprit =
      overQuota.length > 0
        ? `the state folder of ${overQuota.join(' and ')} holds more than its quota (security.sandbox.pluginStateMb): ` +
          'remove what it does not need there'
        : 'something else is filling it: free room on that disk';
    log(
      `plugins: ${shortOf(reserveBytes)} and still has ${free === undefined ? 'an unmeasured amount' : megabytes(free)} free ` +
        `with every subprocess plugin stopped; ${culprit}, then start them with 'homed plugins start NAME'`,
    );
  }

  /** The disk's free bytes once a stop's effect shows: read again until two reads agree, it has the reserve, or SETTLE_AT_MOST_MS pass. */
  private async settled(before: number | undefined): Promise<number | undefined> {
    let last = await this.free();
    for (let waited = 0; waited < SETTLE_AT_MOST_MS; waited += SETTLE_CHECK_MS) {
      if (last !== undefined && last >= this.options.reserveBytes) return last;
      await new Promise<void>((resolve) => this.options.timers.setTimer(resolve, SETTLE_CHECK_MS));
      const next = await this.free();
      if (next === last && next !== before) return next;
      last = next;
    }
    return last;
  }
}
