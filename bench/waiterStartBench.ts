/**
 * waiter.start: how long `waiter --help` takes, started the way a user starts it (`node
 * bin/waiter.js --help`, a fresh process each time), vs `node -e 0` (Node's own start) in
 * alternating rounds; the ratio is the median of the rounds' own ratios. Lower is better.
 * Target <= 4. The note says whether the bundle ran or, stale or missing, the tsx fallback did.
 */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { freshBundle } from '../bin/bundles.js';
import type { BenchContext } from './context.ts';
import { makeFigure, type Figure } from './figures.ts';
import { log, median } from './measure.ts';

const REPO = fileURLToPath(new URL('../', import.meta.url));
const WAITER = fileURLToPath(new URL('../bin/waiter.js', import.meta.url));
const MIN_ROUNDS = 10;

/** Milliseconds from spawning `node ARGS` to its exit; a failure (non-zero exit) rejects with its stderr. */
const timedRun = (args: readonly string[]): Promise<number> =>
  new Promise((resolve, reject) => {
    const started = performance.now();
    const child = spawn(process.execPath, args, { cwd: REPO, stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    child.stdout.resume();
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('error', reject);
    child.on('close', (code) => {
      const ms = performance.now() - started;
      if (code === 0) resolve(ms);
      else reject(new Error(`waiter.start: node ${args.join(' ')} exited ${code}: ${stderr.trim()}`));
    });
  });

/** Figure waiter.start. */
export const waiterStart = async (ctx: BenchContext): Promise<Figure> => {
  const rounds = Math.max(MIN_ROUNDS, ctx.reps);
  const from =
    (await freshBundle('waiter')) === undefined ? 'through tsx, the bundle being missing or stale (npm run build)' : 'from the bundle';
  const baselineArgs = ['-e', '0'];
  const valueArgs = [WAITER, '--help'];
  log(`waiter.start: warm-up (${from})`);
  await timedRun(baselineArgs);
  await timedRun(valueArgs);
  const baseline: number[] = [];
  const value: number[] = [];
  for (let round = 1; round <= rounds; round++) {
    baseline.push(await timedRun(baselineArgs));
    value.push(await timedRun(valueArgs));
  }
  log(`waiter.start: node -e 0 ${median(baseline).toFixed(1)} ms, waiter --help ${median(value).toFixed(1)} ms (medians of ${rounds})`);
  return makeFigure('waiter.start', 'ms/start (lower is better)', median(value), median(baseline), {
    ratio: median(value.map((v, i) => v / baseline[i]!)),
    targetMax: 4,
    note: `${rounds} alternating rounds of \`node bin/waiter.js --help\` (run ${from}) and \`node -e 0\`, each a fresh process; wall time to exit`,
  });
};
