/**
 * A deterministic stream of scheduler messages: arrivals (mostly queued, some interrupts of
 * every level, some from plugins), completions of whatever runs, stops now and then, with
 * virtual time moving 0–1.5 s per message. A small LCG keeps it reproducible.
 */
import type { SchedulerMessage } from '../machines/scheduler/index.ts';

export const schedulerMessages = (count: number, runningOf: () => string | null): (() => SchedulerMessage) => {
  let seed = 0x2545f491;
  const next = () => {
    seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
    return seed / 2 ** 32;
  };
  let at = 0;
  let id = 0;
  let produced = 0;
  return () => {
    if (produced++ >= count) throw new Error('the workload is exhausted');
    at += Math.floor(next() * 1_500);
    const roll = next();
    const running = runningOf();
    if (roll < 0.45 && running) return { type: 'task.finish', at, taskId: running, outcome: 'done' };
    if (roll < 0.47) return { type: 'stop', at };
    id += 1;
    const interrupt = roll > 0.75;
    return {
      type: 'input.arrive',
      at,
      input: {
        id: `in-${id}`,
        source: interrupt ? 'timer' : 'cli',
        origin: next() < 0.5 ? 'plugin' : 'user',
        kind: interrupt ? 'interrupt' : 'queued',
        ...(interrupt ? { level: 1 + Math.floor(next() * 4) } : {}),
      },
    };
  };
};
