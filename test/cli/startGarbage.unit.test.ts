/**
 * The collection the daemon makes once started: it frees what is no longer reachable (what a
 * start read whole), and leaves no collector exposed to code run after it.
 */
import { runInNewContext } from 'node:vm';
import { describe, expect, it } from 'vitest';
import { collectStartGarbage } from '../../cli/startGarbage.ts';

describe('collectStartGarbage', () => {
  it('frees what nothing reaches any more, and exposes no collector after', () => {
    let garbage: number[][] | undefined = Array.from({ length: 200_000 }, (_, i) => [i, i + 1, i + 2]);
    expect(garbage.length).toBe(200_000);
    const before = process.memoryUsage().heapUsed;
    garbage = undefined;
    expect(collectStartGarbage()).toBeGreaterThanOrEqual(0);
    expect(process.memoryUsage().heapUsed).toBeLessThan(before - 10 * 1024 * 1024);
    expect(runInNewContext('typeof gc')).toBe('undefined');
  });
});
