/**
 * The items of a recall index by time: when each was said and the times it speaks of. A search
 * finds through it the few items of a day or month a query names (which may weigh more than the
 * rest) without looking at every item. Entries are appended as items are put; the entries of
 * items removed since are skipped when read, and dropped when they are many. Pure.
 */
import type { TimeWindow } from './recallQuery.ts';

/** Entries appended out of order are merged into the sorted run once there are more than this, or an eighth of it. */
const UNSORTED_AT_MOST = 1_024;

export class ItemTimeline {
  private times = new Float64Array(64);
  private ids: string[] = [];
  /** Per entry, the slot its item had when it was added (a removed item's slot may hold another since). */
  private slots = new Int32Array(64);
  /** Entries [0, sorted) are in time order; those after were appended out of order since. */
  private sorted = 0;

  constructor(private readonly unsortedAtMost = UNSORTED_AT_MOST) {}

  /** How many entries it holds, those of removed items included. */
  get entries(): number {
    return this.ids.length;
  }

  /** Records `id`, in `slot` of its table, at each of `times`. */
  add(id: string, slot: number, times: readonly number[]): void {
    for (const time of times) {
      const at = this.ids.length;
      if (at === this.times.length) {
        const grown = new Float64Array(at * 2);
        grown.set(this.times);
        this.times = grown;
        const slots = new Int32Array(at * 2);
        slots.set(this.slots);
        this.slots = slots;
      }
      this.times[at] = time;
      this.slots[at] = slot;
      this.ids.push(id);
      if (this.sorted === at && (at === 0 || this.times[at - 1]! <= time)) this.sorted = at + 1;
    }
  }

  /** Drops every entry, then records `items` afresh (the removed items' entries go). */
  rebuild(items: Iterable<readonly [string, number, readonly number[]]>): void {
    this.ids = [];
    this.sorted = 0;
    for (const [id, slot, times] of items) this.add(id, slot, times);
    this.sort();
  }

  /**
   * The slots of the items `live` accepts (by id and slot) that were said at, or speak of, a time
   * within one of `windows` (both ends included), each once; undefined as soon as there are more
   * than `atMost` of them. Slots, not ids: what a search looks its documents up by, with no map.
   */
  within(windows: readonly TimeWindow[], live: (id: string, slot: number) => boolean, atMost: number): Set<number> | undefined {
    if (this.ids.length - this.sorted > Math.max(this.unsortedAtMost, this.sorted / 8)) this.sort();
    const found = new Set<number>();
    const take = (i: number): boolean => {
      const slot = this.slots[i]!;
      if (live(this.ids[i]!, slot)) found.add(slot);
      return found.size <= atMost;
    };
    for (const { from, to } of windows) {
      for (let i = this.firstAtOrAfter(from); i < this.sorted && this.times[i]! <= to; i++) if (!take(i)) return undefined;
    }
    for (let i = this.sorted; i < this.ids.length; i++) {
      const time = this.times[i]!;
      if (windows.some((w) => time >= w.from && time <= w.to) && !take(i)) return undefined;
    }
    return found;
  }

  /** The first sorted entry at or after `time`. */
  private firstAtOrAfter(time: number): number {
    let low = 0;
    let high = this.sorted;
    while (low < high) {
      const middle = (low + high) >>> 1;
      if (this.times[middle]! < time) low = middle + 1;
      else high = middle;
    }
    return low;
  }

  private sort(): void {
    const count = this.ids.length;
    const order = Array.from({ length: count }, (_, i) => i).sort((a, b) => this.times[a]! - this.times[b]!);
    const times = new Float64Array(Math.max(64, count * 2));
    const slots = new Int32Array(times.length);
    const ids: string[] = new Array(count);
    for (let i = 0; i < count; i++) {
      times[i] = this.times[order[i]!]!;
      slots[i] = this.slots[order[i]!]!;
      ids[i] = this.ids[order[i]!]!;
    }
    this.times = times;
    this.slots = slots;
    this.ids = ids;
    this.sorted = count;
  }
}
