/**
 * The daemon's heap: once compactOnFullCollections is called, a full collection gives back old
 * pages that hold few live objects (measured in a child process, whose flags are its own), and
 * the collection the daemon makes once started frees what is no longer reachable (what a start
 * read whole) and leaves no collector exposed to code run after it.
 */
import { runInNewContext } from 'node:vm';
import { describe, expect, it } from 'vitest';
import { collectStartGarbage } from '../../cli/daemonHeap.ts';
import { finished, REPO, spawnNode } from '../support/processes.ts';

/** Objects old enough to be promoted, one in 40 of them kept: then the old space in MB, and what is live in it, after a full collection. */
const sparseOldSpace = (compact: boolean): string => `
import { getHeapSpaceStatistics } from 'node:v8';
import { compactOnFullCollections } from ${JSON.stringify(`${REPO}cli/daemonHeap.ts`)};
if (${compact}) compactOnFullCollections();
const kept = [];
for (let round = 0; round < 80; round++) {
  const batch = Array.from({ length: 50_000 }, (_, i) => ({ round, i, text: 'item ' + round + ':' + i }));
  for (let s = 0; s < 3; s++) Array.from({ length: 100_000 }, (_, i) => ({ i }));
  for (let i = 0; i < batch.length; i += 40) kept.push(batch[i]);
}
globalThis.gc();
const old = getHeapSpaceStatistics().find((space) => space.space_name === 'old_space');
console.log(JSON.stringify({ size: old.space_size, used: old.space_used_size, kept: kept.length }));
`;

const oldSpaceAfterCollection = async (compact: boolean): Promise<{ size: number; used: number; kept: number }> => {
  const child = await finished(spawnNode(['--expose-gc', '--import', 'tsx', '--input-type=module', '-e', sparseOldSpace(compact)]));
  expect(child.stderr).toBe('');
  return JSON.parse(child.stdout) as { size: number; used: number; kept: number };
};

describe('the daemon heap', () => {
  it('compacts on a full collection once asked: sparse old pages are given back', async () => {
    const [loose, compacted] = await Promise.all([oldSpaceAfterCollection(false), oldSpaceAfterCollection(true)]);
    expect(compacted.kept).toBe(100_000);
    // Without it, V8 keeps the sparse pages (this is what the daemon is protected from) ...
    expect(loose.size).toBeGreaterThan(2.5 * loose.used);
    // ... and with it the old space is about what is live.
    expect(compacted.size).toBeLessThan(1.5 * compacted.used);
  }, 60_000);

  it('collectStartGarbage frees what nothing reaches any more, and exposes no collector after', () => {
    let garbage: number[][] | undefined = Array.from({ length: 200_000 }, (_, i) => [i, i + 1, i + 2]);
    expect(garbage.length).toBe(200_000);
    const before = process.memoryUsage().heapUsed;
    garbage = undefined;
    expect(collectStartGarbage()).toBeGreaterThanOrEqual(0);
    expect(process.memoryUsage().heapUsed).toBeLessThan(before - 10 * 1024 * 1024);
    expect(runInNewContext('typeof gc')).toBe('undefined');
  });
});
