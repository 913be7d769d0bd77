/** Command-line options shared by the benchmark runners: a usage error, and positive integers. */

/** Bad command-line input: the runner prints it with its help and exits 2. */
export class UsageError extends Error {}

/** `--NAME N`: a positive integer, or `fallback` when the option is absent. */
export const positiveInt = (name: string, raw: string | undefined, fallback: number): number => {
  if (raw === undefined) return fallback;
  const n = Number(raw);
  if (!Number.isSafeInteger(n) || n < 1) throw new UsageError(`--${name} needs a positive integer; got '${raw}'`);
  return n;
};
