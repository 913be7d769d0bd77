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
  /** Entries [0, sorted) are in time order; those after were appended out of order since. */
  private sorted = 0;

  constructor(private readonly unsortedAtMost = UNSORTED_AT_MOST) {}

  /** How many entries it holds, those of removed items included. */
  get entries(): number {
    return this.ids.length;
  }

  /** Records `id` at each of `times`. */
  add(id: string, times: readonly number[]): void {
    for (const time of times) {
      const at = this.ids.length;
      if (at === this.times.length) {
        const grown = new Float64Array(at * 2);
        grown.set(this.times);
        this.times = grown;
      }
      this.times[at] = time;
      this.ids.push(id);
      if (this.sorted === at && (at === 0 || this.times[at - 1]! <= time)) this.sorted = at + 1;
    }
  }

  /** Drops every entry, then records `items` afresh (the removed items' entries go). */
  rebuild(items: Iterable<readonly [string, readonly number[]]>): void {
    this.ids = [];
    this.sorted = 0;
    for (const [id, times] of items) this.add(id, times);
    this.sort();
  }

  /**
   * The ids `live` accepts that were said at, or speak of, a time within one of `windows` (both
   * ends included), each once; undefined as soon as there are more than `atMost` of them.
   */
  within(windows: readonly TimeWindow[], live: (id: string) => boolean, atMost: number): Set<string> | undefined {
    if (this.ids.length - this.sorted > Math.max(this.unsortedAtMost, this.sorted / 8)) this.sort();
    const found = new Set<string>();
    const take = (i: number): boolean => {
      const id = this.ids[i]!;
      if (live(id)) found.add(id);
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
    const ids: string[] = new Array(count);
    for (let i = 0; i < count; i++) {
      times[i] = this.times[order[i]!]!;
      ids[i] = this.ids[order[i]!]!;
    }
    this.times = times;
    this.ids = ids;
    this.sorted = count;
  }
}
