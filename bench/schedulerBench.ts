/**
 * Scheduler figures: decisions per second of the scheduler machine against a plain array
 * queue handling the same messages, and what journaling costs (messages per second through
 * JournaledActor on a durable SQLite log, against the machine alone; and events appended
 * per decision).
 */
import { createActor } from 'xstate';
import { JournaledActor } from '../actors/journal/journaledActor.ts';
import { SCHEDULER_STREAM } from '../events/index.ts';
import { schedulerMachine, type SchedulerMessage } from '../machines/scheduler/index.ts';
import type { BenchContext } from './context.ts';
import { makeFigure, type Figure } from './figures.ts';
import { measurePair, type TimedRun } from './measure.ts';
import { schedulerMessages } from './schedulerWorkload.ts';
import { openHologramStore } from './workload.ts';

const config = { preemptCooldownMs: 2_000, offloadAfterMs: 5 * 60_000 };

/** The naive scheduler: one FIFO array, no levels, no stack. */
const arrayQueueRun =
  (count: number): TimedRun =>
  async () => {
    const queue: string[] = [];
    let running: string | null = null;
    const messages = schedulerMessages(count, () => running);
    const t0 = performance.now();
    for (let i = 0; i < count; i++) {
      const message = messages();
      if (message.type === 'input.arrive') {
        if (running === null) running = message.input.id;
        else queue.push(message.input.id);
      } else if (message.type === 'task.finish') {
        running = queue.shift() ?? null;
      } else if (message.type === 'stop') {
        queue.length = 0;
      }
    }
    return performance.now() - t0;
  };

const machineRun =
  (count: number): TimedRun =>
  async () => {
    const actor = createActor(schedulerMachine, { input: { config } }).start();
    const messages = schedulerMessages(count, () => actor.getSnapshot().context.running?.id ?? null);
    const t0 = performance.now();
    for (let i = 0; i < count; i++) actor.send(messages());
    const ms = performance.now() - t0;
    actor.stop();
    return ms;
  };

/** Figure: scheduler.decide — scheduling decisions per second vs a plain array queue. */
export const schedulerDecisions = async (ctx: BenchContext): Promise<Figure> => {
  const n = ctx.events;
  const result = await measurePair('scheduler.decide', n, ctx.reps, { baseline: arrayQueueRun(n), value: machineRun(n) });
  return makeFigure('scheduler.decide', 'messages/s', result.value, result.baseline, {
    ratio: result.ratio,
    note: `${n} messages (arrivals, completions, stops) through the XState scheduler vs a plain array queue; median of ${ctx.reps}`,
  });
};

/** Figures: scheduler.journaled (durable journal vs machine alone) and scheduler.eventsPerDecision. */
export const schedulerJournaling = async (ctx: BenchContext): Promise<Figure[]> => {
  const n = ctx.appends;
  let appended = 0;
  const journaledRun: TimedRun = async () => {
    const path = ctx.temp.file('scheduler-journal');
    const store = openHologramStore(path);
    const actor = new JournaledActor({ store, stream: SCHEDULER_STREAM, logic: schedulerMachine, input: { config } });
    const messages = schedulerMessages(n, () => actor.snapshot.context.running?.id ?? null);
    const t0 = performance.now();
    for (let i = 0; i < n; i++) await actor.deliver(messages() as SchedulerMessage);
    const ms = performance.now() - t0;
    appended = await store.headSeq();
    actor.stop();
    await store.close();
    ctx.temp.remove(path);
    return ms;
  };
  const result = await measurePair('scheduler.journaled', n, ctx.reps, { baseline: machineRun(n), value: journaledRun });
  return [
    makeFigure('scheduler.journaled', 'messages/s', result.value, result.baseline, {
      ratio: result.ratio,
      note: `${n} messages, each journaled (InputDelivered + facts, one durable append) before the next, vs the machine alone`,
    }),
    makeFigure('scheduler.eventsPerDecision', 'events/message', appended / n, 1, {
      note: 'events appended per message (the input itself plus the facts it caused); baseline 1 = journaling the input only',
    }),
  ];
};
