/**
 * The scheduler's rules as small pure functions: level clamping, the starvation guard,
 * the preemption test with its cooldown, and the order of waiting interrupts.
 */
import type { InputDescriptor, Level, SchedulerConfig, Task } from './schedulerTypes.ts';

/**
 * The level a person's own messages carry (the cli, the web UI, an answer to an approval): the
 * spec's L3 Interactive. A plugin's L3 waits behind them instead of preempting them, and what a
 * plugin queues or sends at L1/L2 never holds them up.
 */
export const PERSON_LEVEL = 3;

/** Queued inputs are level 0; an interrupt without a level is L1; a plugin's L4 becomes L3. */
export const admittedLevel = (input: InputDescriptor): Level => {
  if (input.kind === 'queued') return 0;
  const declared = input.level === undefined ? 1 : Math.trunc(input.level);
  const bounded = Math.min(4, Math.max(1, Number.isFinite(declared) ? declared : 1));
  return (input.origin === 'plugin' && bounded === 4 ? 3 : bounded) as Level;
};

/** Starvation guard: each preemption raises a task's level by one, at most two, capped at L4. */
export const effectiveLevel = (task: Task): number => Math.min(4, task.level + Math.min(task.preemptCount, 2));

export const inCooldown = (task: Task, now: number, config: SchedulerConfig): boolean =>
  task.lastPreemptedAt !== null && now - task.lastPreemptedAt < config.preemptCooldownMs;

/**
 * The level an interrupt must pass to preempt `running`: its effective level, except that from
 * rules 3 on a person's input (origin 'user') passes a task of anyone else at that task's own
 * level: the starvation guard keeps peers from preempting one task for ever, not the person.
 */
export const levelToPass = (running: Task, incoming: Pick<Task, 'origin'>, rules: number): number =>
  rules >= 3 && incoming.origin === 'user' && running.origin !== 'user' ? running.level : effectiveLevel(running);

/** Only a strictly greater level preempts, and never a task preempted within the cooldown. */
export const canPreempt = (running: Task, incoming: Task, now: number, config: SchedulerConfig, rules: number): boolean =>
  incoming.level > levelToPass(running, incoming, rules) && !inCooldown(running, now, config);

/** Inserts an interrupt after every waiting one of the same or a higher level. */
export const insertPending = (pending: readonly Task[], task: Task): Task[] => {
  const index = pending.findIndex((t) => t.level < task.level);
  return index === -1 ? [...pending, task] : [...pending.slice(0, index), task, ...pending.slice(index)];
};
