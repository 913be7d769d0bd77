/** Timing: runs a baseline and a value alternately in one process and keeps the medians. */

/** One timed run: does its own setup and teardown, returns the milliseconds of the timed part. */
export type TimedRun = () => Promise<number>;

/** Medians of each side, and the median of each round's own value/baseline ratio (steadier under load). */
export type PairResult = Readonly<{ value: number; baseline: number; ratio: number }>;

export const median = (xs: readonly number[]): number => {
  const sorted = [...xs].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
};

/** The nearest-rank percentile `p` (0-100) of `xs`. */
export const percentile = (xs: readonly number[], p: number): number => {
  const sorted = [...xs].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
};

export const log = (message: string): void => {
  process.stderr.write(`[bench] ${message}\n`);
};

const perSecond = (events: number, ms: number): number => events / (ms / 1000);

/**
 * Warms each side up once, then times `reps` rounds of (baseline, value) and returns the
 * median throughput of each side in events per second, and the median of the rounds' ratios.
 */
export const measurePair = async (
  name: string,
  events: number,
  reps: number,
  sides: Readonly<{ baseline: TimedRun; value: TimedRun }>,
): Promise<PairResult> => {
  log(`${name}: warm-up`);
  await sides.baseline();
  await sides.value();
  const baseline: number[] = [];
  const value: number[] = [];
  for (let rep = 1; rep <= reps; rep++) {
    baseline.push(perSecond(events, await sides.baseline()));
    value.push(perSecond(events, await sides.value()));
    log(`${name}: rep ${rep}/${reps}: baseline ${Math.round(baseline.at(-1)!)}/s, value ${Math.round(value.at(-1)!)}/s`);
  }
  return { value: median(value), baseline: median(baseline), ratio: median(value.map((v, i) => v / baseline[i]!)) };
};

/** Progress of a long step on stderr: a rewritten line on a terminal, quarter marks otherwise. */
export const progress = (label: string): ((done: number, total: number) => void) => {
  let lastQuarter = 0;
  return (done, total) => {
    if (process.stderr.isTTY) {
      process.stderr.write(`\r[bench] ${label}: ${Math.floor((done / total) * 100)}%${done >= total ? '\n' : ''}`);
      return;
    }
    const quarter = Math.floor((done / total) * 4);
    if (quarter > lastQuarter) {
      lastQuarter = quarter;
      log(`${label}: ${quarter * 25}%`);
    }
  };
};
