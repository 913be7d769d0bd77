/** What every figure gets from the command line, and the temp files it writes into. */
import type { TempFiles } from './tempFiles.ts';

export type BenchContext = Readonly<{
  temp: TempFiles;
  /** Events of the large figures (batched append, rebuild). */
  events: number;
  /** Appends of the single and concurrent figures. */
  appends: number;
  /** Timed repetitions of each side. */
  reps: number;
}>;
