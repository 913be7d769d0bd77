/**
 * The collection the daemon makes when nobody waits on it: it frees what is no longer reachable,
 * gives back the old generation's pages that held it, and leaves no collector exposed after.
 */
import { getHeapSpaceStatistics } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { describe, expect, it } from 'vitest';
import { compactHeap, oldSpaceSlackMb } from '../../cli/heapCompaction.ts';

const oldSpaceMb = () => getHeapSpaceStatistics().find((s) => s.space_name === 'old_space')!.space_size / 1_048_576;

describe('compactHeap', () => {
  it('frees what nothing reaches any more, shrinks the old generation it was spread over, and exposes no collector after', () => {
    compactHeap();
    const start = oldSpaceMb();
    // Long-lived objects promoted to the old generation, then nine in ten dropped: what stays is spread thin.
    const kept: number[][] = [];
    let all: number[][] | undefined = Array.from({ length: 600_000 }, (_, i) => [i, i + 1, i + 2]);
    compactHeap(); // promotes them
    for (let i = 0; i < all.length; i += 10) kept.push(all[i]!);
    all = undefined;
    const grown = oldSpaceMb();
    expect(grown).toBeGreaterThan(start + 20);
    const { ms, freedMb } = compactHeap();
    expect(ms).toBeGreaterThanOrEqual(0);
    expect(freedMb).toBeGreaterThan((grown - start) / 4);
    expect(oldSpaceMb()).toBeLessThan(start + (grown - start) / 2);
    expect(oldSpaceSlackMb()).toBeLessThan(grown - start);
    expect(kept[59_999]).toEqual([599_990, 599_991, 599_992]);
    expect(runInNewContext('typeof gc')).toBe('undefined');
  });
});
