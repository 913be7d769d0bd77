/**
 * The input scheduler as an XState machine: `idle` or `busy`, with the queue, interrupt
 * stack and cancel budget in its context. Every message is decided by `decideScheduler`,
 * folded by `evolveScheduler`, and each fact is emitted for the log. Pure: time comes in
 * the messages (`at`); deadlines are announced as `wakeAt` for the runtime to tick.
 */
import { enqueueActions, setup } from 'xstate';
import { decideScheduler } from './decide.ts';
import { evolveScheduler, initialSchedulerState } from './evolve.ts';
import {
  DEFAULT_SCHEDULER_CONFIG,
  type SchedulerConfig,
  type SchedulerFact,
  type SchedulerMessage,
  type SchedulerState,
} from './schedulerTypes.ts';

export type SchedulerMachineInput = Readonly<{ config?: Partial<SchedulerConfig>; state?: SchedulerState }>;

export const schedulerMachine = setup({
  types: {
    context: {} as SchedulerState,
    events: {} as SchedulerMessage,
    emitted: {} as SchedulerFact,
    input: {} as SchedulerMachineInput,
  },
  guards: {
    hasRunningTask: ({ context }) => context.running !== null,
  },
  actions: {
    decideAndRecord: enqueueActions(({ context, event, enqueue }) => {
      const facts = decideScheduler(context, event);
      enqueue.assign(() => facts.reduce(evolveScheduler, { ...context, now: Math.max(context.now, event.at) }));
      for (const fact of facts) enqueue.emit(fact);
    }),
  },
}).createMachine({
  id: 'scheduler',
  context: ({ input }) => input.state ?? initialSchedulerState({ ...DEFAULT_SCHEDULER_CONFIG, ...input.config }),
  initial: 'idle',
  on: {
    'input.arrive': { actions: 'decideAndRecord' },
    'task.finish': { actions: 'decideAndRecord' },
    stop: { actions: 'decideAndRecord' },
    cancel: { actions: 'decideAndRecord' },
    tick: { actions: 'decideAndRecord' },
    'rules.adopt': { actions: 'decideAndRecord' },
  },
  states: {
    idle: { always: { guard: 'hasRunningTask', target: 'busy' } },
    busy: { always: { guard: ({ context }) => context.running === null, target: 'idle' } },
  },
});
