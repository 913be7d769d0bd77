/**
 * The check-then-open race: while files_read runs, another thread keeps swapping a directory of
 * the root for a symlink to a directory outside it. The read may fail (the path changed, or is
 * missing for a moment) but must never return the outside file.
 */
import { mkdirSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import { describe, expect, it } from 'vitest';
import { VirtualClock } from '../../events/index.ts';
import { filesPlugin } from '../../plugins/builtin/files/index.ts';
import { createFakePluginApi, replyOf } from '../support/fakePluginApi.ts';
import { createManualTimers } from '../support/manualTimers.ts';
import { useTempDir } from '../support/tempDir.ts';

const tempDir = useTempDir();

/**
 * Swaps `<root>/d` between the real directory and a symlink to outside, each step one rename
 * (so `d` is, in turn, missing, the symlink, missing, the directory), until told to stop. A
 * directory files_write made while `d` was missing is a stray: it is removed so the cycle goes on.
 */
const SWAPPER = `
const { workerData } = require('node:worker_threads');
const { existsSync, lstatSync, renameSync, rmSync } = require('node:fs');
const { root, stop } = workerData;
const flag = new Int32Array(stop);
const at = (name) => root + '/' + name;
const attempt = (step) => { try { step(); } catch {} };
const dropStray = () => attempt(() => {
  if (existsSync(at('d.real')) && lstatSync(at('d')).isDirectory()) rmSync(at('d'), { recursive: true, force: true });
});
let swaps = 0;
while (Atomics.load(flag, 0) === 0) {
  attempt(() => renameSync(at('d'), at('d.real')));
  dropStray();
  attempt(() => renameSync(at('evil'), at('d')));
  attempt(() => renameSync(at('d'), at('evil')));
  dropStray();
  attempt(() => renameSync(at('d.real'), at('d')));
  swaps++;
}
Atomics.store(flag, 1, swaps);
`;

/** A files plugin whose root holds `d/f.txt` and a symlink `evil` to a directory outside, and a swapper thread. */
const givenSwappedDirectory = async () => {
  const dataDir = tempDir();
  const outside = tempDir();
  const api = createFakePluginApi('files', {});
  await filesPlugin.start(api, { dataDir, clock: new VirtualClock(), timers: createManualTimers() });
  const root = join(dataDir, 'files');
  mkdirSync(join(root, 'd'));
  writeFileSync(join(root, 'd', 'f.txt'), 'inside');
  writeFileSync(join(outside, 'f.txt'), 'OUTSIDE SECRET');
  symlinkSync(outside, join(root, 'evil'));

  const stop = new SharedArrayBuffer(8);
  const swapper = new Worker(SWAPPER, { eval: true, workerData: { root, stop } });
  /** Stops the swapper; how many swaps it made. */
  const stopSwapping = async (): Promise<number> => {
    Atomics.store(new Int32Array(stop), 0, 1);
    await new Promise((done) => swapper.once('exit', done));
    return new Int32Array(stop)[1]!;
  };
  return { api, outside, stopSwapping };
};

describe('files tools under a symlink swapped in a loop', () => {
  it('files_read never reads outside the root in 3,000 tries', async () => {
    const { api, stopSwapping } = await givenSwappedDirectory();
    let swaps = 0;
    const outcomes = { inside: 0, outside: 0, refused: 0 };
    try {
      for (let i = 0; i < 3000; i++) {
        const reply = replyOf(await api.call('files_read', { path: 'd/f.txt' }));
        if (reply.content.includes('OUTSIDE SECRET')) outcomes.outside++;
        else if (!reply.isError && reply.content === 'inside') outcomes.inside++;
        else {
          expect(reply.isError, reply.content).toBe(true);
          expect(reply.content).not.toMatch(/\n\s+at /);
          outcomes.refused++;
        }
      }
    } finally {
      swaps = await stopSwapping();
    }
    expect(swaps, 'the swapper ran alongside the reads').toBeGreaterThan(100);
    expect(outcomes.outside, JSON.stringify(outcomes)).toBe(0);
    expect(outcomes.inside + outcomes.refused).toBe(3000);
  });

  it('files_write never writes outside the root in 1,000 tries', async () => {
    const { api, outside, stopSwapping } = await givenSwappedDirectory();
    let written = 0;
    let swaps = 0;
    try {
      for (let i = 0; i < 1000; i++) {
        const reply = replyOf(await api.call('files_write', { path: 'd/planted.txt', content: `try ${i}` }));
        if (!reply.isError) written++;
        else expect(reply.content).not.toMatch(/\n\s+at /);
      }
    } finally {
      swaps = await stopSwapping();
    }
    expect(swaps).toBeGreaterThan(100);
    expect(written).toBeGreaterThan(0);
    expect(readdirSync(outside)).toEqual(['f.txt']);
    expect(readFileSync(join(outside, 'f.txt'), 'utf8')).toBe('OUTSIDE SECRET');
  });
});
