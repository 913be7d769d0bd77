/**
 * Compacts the heap once the daemon has been idle a while after work: nothing running, waiting
 * or suspended in the scheduler for `idleMs`, and more than `minSlackMb` of the old generation
 * committed but not live. Once per idle stretch; the next one begins with the next task. A
 * compaction pauses the daemon (~0.3 s at 100,000 utterances), so it is made only when nobody
 * waits. It changes no state and decides nothing: it is not journaled. `first` is other upkeep
 * of the same kind made in the same idle spell before it (the recall index snapshot), whose
 * garbage the compaction then collects; the compaction is skipped if work came meanwhile.
 */
import type { Timers } from '../events/index.ts';
import type { SchedulerFacility } from '../actors/modules/schedulerModule.ts';
import { isIdle } from '../machines/scheduler/index.ts';

export type IdleCompactionOptions = Readonly<{
  scheduler: Pick<SchedulerFacility, 'onFacts' | 'state'>;
  timers: Timers;
  /** Compacts; @returns the ms it took. */
  compact: () => number;
  /** MB the old generation holds committed but not live. */
  slackMb: () => number;
  idleMs?: number;
  minSlackMb?: number;
  log?: (line: string) => void;
  /** Upkeep made first in each idle spell (it must report its own failures); the compaction waits for it. */
  first?: () => Promise<void>;
}>;

export const IDLE_COMPACTION_MS = 30_000;
export const MIN_SLACK_MB = 48;

/** Starts watching; @returns a function that stops it, resolving once upkeep under way (`first`) is done. */
export const compactWhenIdle = (options: IdleCompactionOptions): (() => Promise<void>) => {
  const { scheduler, timers, idleMs = IDLE_COMPACTION_MS, minSlackMb = MIN_SLACK_MB } = options;
  let timer: unknown;
  let stopped = false;
  /** Set while `first` runs: an idle spell that begins meanwhile does not start it again, and a stop waits for it. */
  let running: Promise<void> | undefined;
  const disarm = () => {
    if (timer !== undefined) timers.clearTimer(timer);
    timer = undefined;
  };
  const compact = () => {
    const slack = options.slackMb();
    if (slack < minSlackMb) return;
    const ms = options.compact();
    options.log?.(`compacted the heap after ${idleMs / 1000} s idle: ${slack.toFixed(0)} MB not live, ${ms.toFixed(0)} ms`);
  };
  const fire = () => {
    timer = undefined;
    if (!options.first) return compact();
    if (running) return;
    running = options
      .first()
      .then(
        () => {
          if (!stopped && isIdle(scheduler.state())) compact();
        },
        (error: unknown) => options.log?.(`idle upkeep failed: ${(error as Error)?.message ?? String(error)}`),
      )
      .finally(() => {
        running = undefined;
      });
  };
  const stopWatching = scheduler.onFacts(() => {
    disarm();
    if (isIdle(scheduler.state())) timer = timers.setTimer(fire, idleMs);
  });
  return async () => {
    stopped = true;
    stopWatching();
    disarm();
    await running;
  };
};
