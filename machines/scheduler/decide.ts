/**
 * Decides what a message means for the scheduler: the facts to record, in order. Pure:
 * the same state and message always give the same facts. Each fact is folded with
 * `evolveScheduler` before the next decision, so a chain of decisions sees its own effects.
 */
import { evolveScheduler, waitingTask } from './evolve.ts';
import { admittedLevel, canPreempt, levelToPass } from './schedulingRules.ts';
import type { SchedulerFact, SchedulerMessage, SchedulerState } from './schedulerTypes.ts';

type Decision = { state: SchedulerState; facts: SchedulerFact[] };

const record = (decision: Decision, fact: SchedulerFact): Decision => ({
  state: evolveScheduler(decision.state, fact),
  facts: [...decision.facts, fact],
});

const isBudgeted = (state: SchedulerState, id: string) => state.cancelBudget.includes(id);

/** Waiting inputs that stop short-circuits: they never start. */
const shortCircuitBudgeted = (decision: Decision, at: number, ids: readonly string[]): Decision =>
  ids.reduce((d, id) => (isBudgeted(d.state, id) ? record(d, { type: 'InputShortCircuited', data: { inputId: id, at } }) : d), decision);

/** While the best waiting interrupt may preempt the running task, let it. */
const preemptWhileAllowed = (decision: Decision, at: number): Decision => {
  let d = decision;
  for (;;) {
    const best = d.state.pending[0];
    const running = d.state.running;
    if (!best || !running || !canPreempt(running, best, at, d.state.config, d.state.rules)) return d;
    if (isBudgeted(d.state, best.id)) {
      // It would start now, but stop short-circuits it instead.
      d = record(d, { type: 'InputShortCircuited', data: { inputId: best.id, at } });
      continue;
    }
    d = record(d, {
      type: 'TaskPreempted',
      data: { taskId: running.id, by: best.id, preemptCount: running.preemptCount + 1, stackDepth: d.state.stack.length + 1, at },
    });
    d = record(d, { type: 'TaskStarted', data: { taskId: best.id, at } });
  }
};

/** With nothing running: resume the suspended top, else start the next waiting input. */
const scheduleNext = (decision: Decision, at: number): Decision => {
  let d = decision;
  if (d.state.running) return d;
  if (d.state.inbox.length > 0) d = record(d, { type: 'InboxPumped', data: { inputIds: d.state.inbox.map((t) => t.id), at } });
  const top = d.state.stack[d.state.stack.length - 1];
  if (top) {
    d = record(d, { type: 'TaskResumed', data: { taskId: top.id, stackDepth: d.state.stack.length - 1, at } });
    return preemptWhileAllowed(d, at);
  }
  for (;;) {
    const next = d.state.pending[0] ?? d.state.queue[0];
    if (!next) return d;
    if (isBudgeted(d.state, next.id)) {
      d = record(d, { type: 'InputShortCircuited', data: { inputId: next.id, at } });
      continue;
    }
    return record(d, { type: 'TaskStarted', data: { taskId: next.id, at } });
  }
};

/** Inputs waiting and not yet told that the agent is busy (a stopped one is not told: it will be short-circuited). */
const untoldBacklog = (state: SchedulerState): string[] =>
  [...state.queue, ...state.inbox, ...(state.rules >= 2 ? state.pending : [])]
    .filter((t) => !isBudgeted(state, t.id) && !state.acknowledged.includes(t.id))
    .map((t) => t.id);

/** Tells queued inputs that the agent is busy once the scheduler has been busy too long; they stay queued. */
const acknowledgeBacklog = (decision: Decision, at: number): Decision => {
  const { state } = decision;
  if (!state.running || state.busySince === null || at - state.busySince < state.config.offloadAfterMs) return decision;
  const waiting = untoldBacklog(state);
  if (waiting.length === 0) return decision;
  return record(decision, {
    type: 'BacklogAcknowledged',
    data: { inputIds: waiting, runningTaskId: state.running.id, busyForMs: at - state.busySince, at },
  });
};

const arrive = (decision: Decision, message: Extract<SchedulerMessage, { type: 'input.arrive' }>, at: number): Decision => {
  const { input } = message;
  const known = waitingTask(decision.state, input.id) ?? [decision.state.running, ...decision.state.stack].find((t) => t?.id === input.id);
  if (known) return decision; // a re-delivered input: it is already in the scheduler
  const level = admittedLevel(input);
  return record(decision, {
    type: 'InputQueued',
    data: {
      inputId: input.id,
      source: input.source,
      origin: input.origin,
      kind: input.kind,
      declaredLevel: input.kind === 'interrupt' && Number.isFinite(input.level) ? input.level! : null,
      level,
      where: input.kind === 'queued' ? 'inbox' : 'pending',
      at,
    },
  });
};

export const decideScheduler = (state: SchedulerState, message: SchedulerMessage): SchedulerFact[] => {
  const at = Math.max(state.now, message.at);
  let d: Decision = { state, facts: [] };
  switch (message.type) {
    case 'input.arrive':
      d = arrive(d, message, at);
      break;
    case 'task.finish':
      // A late or repeated completion records nothing, but is still a decision point below.
      if (d.state.running?.id === message.taskId) {
        d = record(d, { type: 'TaskCompleted', data: { taskId: message.taskId, outcome: message.outcome, at } });
      }
      break;
    case 'stop': {
      const waiting = [...d.state.queue, ...d.state.inbox, ...d.state.pending].map((t) => t.id);
      d = record(d, { type: 'StopRequested', data: { runningTaskId: d.state.running?.id ?? null, cancelBudget: waiting, at } });
      if (!d.state.running) d = shortCircuitBudgeted(d, at, waiting);
      break;
    }
    case 'cancel': {
      // The same fact as a stop, narrowed to one input; a suspended or unknown one is left alone.
      const running = d.state.running?.id === message.inputId;
      const waiting = waitingTask(d.state, message.inputId) !== undefined;
      if (!running && !waiting) break;
      const cancelBudget = waiting ? [message.inputId] : [];
      d = record(d, { type: 'StopRequested', data: { runningTaskId: running ? message.inputId : null, cancelBudget, at } });
      // Its sender stopped it: a waiting input ends now, not once the running task does.
      d = shortCircuitBudgeted(d, at, cancelBudget);
      break;
    }
    case 'tick':
      break;
    case 'rules.adopt':
      if (message.version > d.state.rules) d = record(d, { type: 'SchedulerRulesAdopted', data: { version: message.version, at } });
      break;
    default: {
      const unhandled: never = message;
      throw new Error(`scheduler: unknown message ${(unhandled as { type: string }).type}`);
    }
  }
  // Every message is a decision point: a deadline that passed since the last one (a cooldown
  // that ended, the backlog time) is acted on now, whatever the message was.
  d = d.state.running ? preemptWhileAllowed(d, at) : scheduleNext(d, at);
  return acknowledgeBacklog(d, at).facts;
};

/** When the scheduler next needs a tick: a cooldown ending or the backlog deadline. */
export const nextWakeAt = (state: SchedulerState): number | null => {
  const { running, config } = state;
  if (!running) return null;
  const times: number[] = [];
  if (
    state.pending.length > 0 &&
    running.lastPreemptedAt !== null &&
    state.pending[0]!.level > levelToPass(running, state.pending[0]!, state.rules)
  ) {
    times.push(running.lastPreemptedAt + config.preemptCooldownMs);
  }
  if (untoldBacklog(state).length > 0 && state.busySince !== null) times.push(state.busySince + config.offloadAfterMs);
  const due = times.filter((t) => t > state.now);
  return due.length > 0 ? Math.min(...due) : null;
};
