/**
 * Applies one scheduler fact to the state. Pure; the live machine and every fold of the
 * log use this same function, so the log and the actor cannot disagree.
 */
import { insertPending } from './schedulingRules.ts';
import { DEFAULT_SCHEDULER_CONFIG, type SchedulerConfig, type SchedulerFact, type SchedulerState, type Task } from './schedulerTypes.ts';

export const initialSchedulerState = (config: SchedulerConfig = DEFAULT_SCHEDULER_CONFIG): SchedulerState => ({
  config,
  rules: 1,
  now: 0,
  inbox: [],
  queue: [],
  pending: [],
  stack: [],
  running: null,
  busySince: null,
  cancelBudget: [],
  acknowledged: [],
});

const without = (tasks: readonly Task[], ids: readonly string[]) => tasks.filter((t) => !ids.includes(t.id));

/** Finds a waiting task (inbox, queue or pending) by id. */
export const waitingTask = (state: SchedulerState, id: string): Task | undefined =>
  state.pending.find((t) => t.id === id) ?? state.queue.find((t) => t.id === id) ?? state.inbox.find((t) => t.id === id);

const removeWaiting = (state: SchedulerState, ids: readonly string[]): SchedulerState => ({
  ...state,
  inbox: without(state.inbox, ids),
  queue: without(state.queue, ids),
  pending: without(state.pending, ids),
  cancelBudget: state.cancelBudget.filter((id) => !ids.includes(id)),
  acknowledged: state.acknowledged.filter((id) => !ids.includes(id)),
});

/** Nothing runs, is suspended or waits. */
export const isIdle = (state: SchedulerState): boolean =>
  state.running === null && state.stack.length === 0 && state.inbox.length + state.queue.length + state.pending.length === 0;

/** The busy period ends only when the scheduler is idle: back-to-back tasks are one period. */
const settleIdle = (state: SchedulerState): SchedulerState => (isIdle(state) ? { ...state, busySince: null } : state);

export const evolveScheduler = (state: SchedulerState, fact: SchedulerFact): SchedulerState => {
  const at = Math.max(state.now, fact.data.at);
  const timed = { ...state, now: at };
  switch (fact.type) {
    case 'InputQueued': {
      const { inputId, source, origin, kind, level, where } = fact.data;
      const task: Task = { id: inputId, source, origin, kind, level, preemptCount: 0, lastPreemptedAt: null };
      return where === 'inbox' ? { ...timed, inbox: [...timed.inbox, task] } : { ...timed, pending: insertPending(timed.pending, task) };
    }
    case 'InboxPumped': {
      const moved = timed.inbox.filter((t) => fact.data.inputIds.includes(t.id));
      return { ...timed, inbox: without(timed.inbox, fact.data.inputIds), queue: [...timed.queue, ...moved] };
    }
    case 'TaskStarted': {
      const task = waitingTask(timed, fact.data.taskId);
      if (!task) return timed;
      return { ...removeWaiting(timed, [task.id]), running: task, busySince: timed.busySince ?? at };
    }
    case 'TaskPreempted': {
      const running = timed.running;
      if (!running || running.id !== fact.data.taskId) return timed;
      const suspended: Task = { ...running, preemptCount: fact.data.preemptCount, lastPreemptedAt: at };
      return { ...timed, running: null, stack: [...timed.stack, suspended] };
    }
    case 'TaskResumed': {
      const top = timed.stack[timed.stack.length - 1];
      if (!top || top.id !== fact.data.taskId) return timed;
      return { ...timed, stack: timed.stack.slice(0, -1), running: top };
    }
    case 'TaskCompleted':
      return timed.running?.id === fact.data.taskId ? settleIdle({ ...timed, running: null }) : timed;
    case 'StopRequested':
      return { ...timed, cancelBudget: [...new Set([...timed.cancelBudget, ...fact.data.cancelBudget])] };
    case 'InputShortCircuited':
      return settleIdle(removeWaiting(timed, [fact.data.inputId]));
    case 'BacklogOffloaded':
      return removeWaiting(timed, fact.data.inputIds);
    case 'BacklogAcknowledged':
      return { ...timed, acknowledged: [...new Set([...timed.acknowledged, ...fact.data.inputIds])] };
    case 'SchedulerRulesAdopted':
      return { ...timed, rules: fact.data.version };
    default: {
      const unhandled: never = fact;
      throw new Error(`scheduler: unhandled fact ${(unhandled as { type: string }).type}`);
    }
  }
};

/** The same shape as the projection's view, from a live state: for comparing the two. */
export const schedulerViewOf = (state: SchedulerState) => ({
  inbox: state.inbox.map((t) => t.id),
  queue: state.queue.map((t) => t.id),
  pending: state.pending.map((t) => t.id),
  stack: state.stack.map((t) => t.id),
  running: state.running?.id ?? null,
  cancelBudget: [...state.inbox, ...state.queue, ...state.pending].map((t) => t.id).filter((id) => state.cancelBudget.includes(id)),
});
