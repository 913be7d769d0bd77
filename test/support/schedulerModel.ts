/**
 * A plain reference model of the input scheduler for model-based tests. It restates the
 * rules (levels, preemption with starvation guard and cooldown, the interrupt stack, stop
 * with its cancel budget, backlog offload) with arrays and loops, independently of
 * `machines/scheduler/`, so a bug there is not copied into the oracle. It tracks every
 * input it ever admitted, with where it is now or how it ended.
 *
 * Where the written rules leave a choice open, the model takes the one the machine makes
 * and says so, so a reader can tell a rule from an implementation choice.
 */

export type ModelStatus = 'inbox' | 'queue' | 'pending' | 'running' | 'suspended' | 'completed' | 'short_circuited' | 'offloaded';

export const WAITING: readonly ModelStatus[] = ['inbox', 'queue', 'pending'];
export const ENDED: readonly ModelStatus[] = ['completed', 'short_circuited', 'offloaded'];

export type ModelOrigin = 'user' | 'plugin' | 'kernel';

export type ModelInput = {
  readonly id: string;
  readonly kind: 'queued' | 'interrupt';
  readonly origin: ModelOrigin;
  /** 0 for a queued input, 1–4 for an interrupt. */
  readonly level: number;
  /** Arrival order (1, 2, ...), the tie-break among waiting interrupts of one level. */
  readonly order: number;
  status: ModelStatus;
  preemptCount: number;
  lastPreemptedAt: number | null;
  /** In the cancel budget of a stop: short-circuited instead of started. */
  budgeted: boolean;
  /** Told that the agent is busy, once the scheduler was busy past the offload time; still queued. */
  toldBusy: boolean;
};

export type ModelMessage =
  | Readonly<{
      type: 'input.arrive';
      at: number;
      input: Readonly<{ id: string; source: string; origin: ModelOrigin; kind: 'queued' | 'interrupt'; level?: number }>;
    }>
  | Readonly<{ type: 'task.finish'; at: number; taskId: string; outcome: string }>
  | Readonly<{ type: 'stop'; at: number }>
  | Readonly<{ type: 'cancel'; at: number; inputId: string }>
  | Readonly<{ type: 'tick'; at: number }>
  | Readonly<{ type: 'rules.adopt'; at: number; version: number }>;

export type ModelConfig = Readonly<{ preemptCooldownMs: number; offloadAfterMs: number }>;

export type SchedulerModel = {
  readonly config: ModelConfig;
  now: number;
  /** The rules in force: 1 until a newer version is adopted (2 tells waiting interrupts busy too). */
  rules: number;
  /** Every input ever admitted, by id. */
  readonly inputs: Map<string, ModelInput>;
  inbox: string[];
  queue: string[];
  /** Waiting interrupts: higher level first, then arrival order. */
  pending: string[];
  /** Suspended tasks, bottom first. */
  stack: string[];
  running: string | null;
  /** When the current busy period began (a task started with nothing running or suspended). */
  busySince: number | null;
  /** Each stop, with the inputs that were waiting when it was pressed. */
  readonly stops: { at: number; budget: string[] }[];
  arrivals: number;
  /** When true, an input whose id already ended is ignored too (not what the machine does today). */
  readonly ignoreEndedIds: boolean;
};

export const createSchedulerModel = (config: ModelConfig, options: { ignoreEndedIds?: boolean } = {}): SchedulerModel => ({
  config,
  now: 0,
  rules: 1,
  inputs: new Map(),
  inbox: [],
  queue: [],
  pending: [],
  stack: [],
  running: null,
  busySince: null,
  stops: [],
  arrivals: 0,
  ignoreEndedIds: options.ignoreEndedIds ?? false,
});

/**
 * The level an input runs at: a queued input is 0; an interrupt declares 1–4, none means
 * L1, anything else is cut to a whole number and brought into 1–4; a plugin's L4 is L3.
 */
export const modelLevel = (kind: 'queued' | 'interrupt', origin: ModelOrigin, declared: number | undefined): number => {
  if (kind === 'queued') return 0;
  let level = declared === undefined || !Number.isFinite(declared) ? 1 : Math.trunc(declared);
  if (level < 1) level = 1;
  if (level > 4) level = 4;
  if (origin === 'plugin' && level === 4) level = 3;
  return level;
};

const input = (model: SchedulerModel, id: string): ModelInput => {
  const found = model.inputs.get(id);
  if (!found) throw new Error(`scheduler model: no input '${id}'`);
  return found;
};

const removeFrom = (list: string[], id: string): void => {
  const index = list.indexOf(id);
  if (index !== -1) list.splice(index, 1);
};

const insertPending = (model: SchedulerModel, id: string): void => {
  model.pending.push(id);
  model.pending.sort((a, b) => input(model, b).level - input(model, a).level || input(model, a).order - input(model, b).order);
};

const start = (model: SchedulerModel, id: string, at: number): void => {
  const task = input(model, id);
  task.status = 'running';
  model.running = id;
  if (model.busySince === null) model.busySince = at;
};

const shortCircuit = (model: SchedulerModel, id: string): void => {
  input(model, id).status = 'short_circuited';
};

/** Starvation guard: each preemption so far raises the level by one, at most two, never past L4. */
const effectiveLevel = (task: ModelInput): number => Math.min(4, task.level + Math.min(task.preemptCount, 2));

const mayPreempt = (model: SchedulerModel, running: ModelInput, incoming: ModelInput, at: number): boolean => {
  const cooling = running.lastPreemptedAt !== null && at - running.lastPreemptedAt < model.config.preemptCooldownMs;
  // From rules 3 the person outranks anyone else's task at its own level, guard or not.
  const person = model.rules >= 3 && incoming.origin === 'user' && running.origin !== 'user';
  return incoming.level > (person ? running.level : effectiveLevel(running)) && !cooling;
};

/** While a task runs: the best waiting interrupt preempts it as long as the rule allows. */
const preemptWhileAllowed = (model: SchedulerModel, at: number): void => {
  for (;;) {
    const bestId = model.pending[0];
    if (bestId === undefined || model.running === null) return;
    const best = input(model, bestId);
    const running = input(model, model.running);
    if (!mayPreempt(model, running, best, at)) return;
    // It would start now; an input that was waiting at a stop is short-circuited instead.
    if (best.budgeted) {
      model.pending.shift();
      shortCircuit(model, bestId);
      continue;
    }
    running.preemptCount += 1;
    running.lastPreemptedAt = at;
    running.status = 'suspended';
    model.stack.push(running.id);
    model.running = null;
    model.pending.shift();
    start(model, bestId, at);
  }
};

/** With nothing running: move the inbox into the queue, resume the top of the stack, else start the next input. */
const scheduleNext = (model: SchedulerModel, at: number): void => {
  if (model.running !== null) return;
  for (const id of model.inbox) input(model, id).status = 'queue';
  model.queue.push(...model.inbox);
  model.inbox = [];
  const top = model.stack.pop();
  if (top !== undefined) {
    input(model, top).status = 'running';
    model.running = top;
    preemptWhileAllowed(model, at);
    return;
  }
  for (;;) {
    const next = model.pending.shift() ?? model.queue.shift();
    if (next === undefined) return;
    if (input(model, next).budgeted) {
      shortCircuit(model, next);
      continue;
    }
    start(model, next, at);
    return;
  }
};

/**
 * Once busy for `offloadAfterMs`, inputs waiting and not in a cancel budget are told so, once,
 * and keep waiting: queued ones, and from rules 2 on waiting interrupts too.
 */
const offloadBacklog = (model: SchedulerModel, at: number): void => {
  if (model.running === null || model.busySince === null || at - model.busySince < model.config.offloadAfterMs) return;
  for (const id of [...model.queue, ...model.inbox, ...(model.rules >= 2 ? model.pending : [])]) {
    const task = input(model, id);
    if (!task.budgeted) task.toldBusy = true;
  }
};

const isInScheduler = (model: SchedulerModel, id: string): boolean => {
  const known = model.inputs.get(id);
  if (!known) return false;
  return model.ignoreEndedIds || !ENDED.includes(known.status);
};

/** Applies one message to the model. */
export const stepModel = (model: SchedulerModel, message: ModelMessage): void => {
  const at = Math.max(model.now, message.at);
  model.now = at;
  switch (message.type) {
    case 'input.arrive': {
      const { id, origin, kind, level } = message.input;
      // A re-delivered input (waiting, running or suspended) adds nothing; the message is still a decision point.
      if (!isInScheduler(model, id)) {
        model.inputs.set(id, {
          id,
          kind,
          origin,
          level: modelLevel(kind, origin, level),
          order: ++model.arrivals,
          status: kind === 'queued' ? 'inbox' : 'pending',
          preemptCount: 0,
          lastPreemptedAt: null,
          budgeted: false,
          toldBusy: false,
        });
        if (kind === 'queued') model.inbox.push(id);
        else insertPending(model, id);
      }
      break;
    }
    case 'task.finish': {
      // A completion for a task that is not running (late, repeated, unknown) completes nothing.
      if (model.running === message.taskId) {
        input(model, message.taskId).status = 'completed';
        model.running = null;
      }
      break;
    }
    case 'stop': {
      const budget = [...model.inbox, ...model.queue, ...model.pending];
      for (const id of budget) input(model, id).budgeted = true;
      model.stops.push({ at, budget });
      if (model.running === null) {
        for (const id of budget) {
          removeFrom(model.inbox, id);
          removeFrom(model.queue, id);
          removeFrom(model.pending, id);
          shortCircuit(model, id);
        }
      }
      break;
    }
    case 'cancel': {
      // One input's stop: the running task is told to stop; a waiting one ends at once, never
      // started, whatever runs. Suspended, ended and unknown ids are left alone.
      const id = message.inputId;
      const waiting = model.inbox.includes(id) || model.queue.includes(id) || model.pending.includes(id);
      if (!waiting) break;
      input(model, id).budgeted = true;
      model.stops.push({ at, budget: [id] });
      removeFrom(model.inbox, id);
      removeFrom(model.queue, id);
      removeFrom(model.pending, id);
      shortCircuit(model, id);
      break;
    }
    case 'tick':
      break;
    case 'rules.adopt':
      model.rules = Math.max(model.rules, message.version);
      break;
  }
  // Every message is a decision point: whatever became due since the last one happens now.
  if (model.running !== null) preemptWhileAllowed(model, at);
  else scheduleNext(model, at);
  // One busy period lasts until nothing runs or is suspended (back-to-back tasks included).
  if (model.running === null && model.stack.length === 0) model.busySince = null;
  offloadBacklog(model, at);
};

/**
 * What a tick at `at` would decide, from a copy of the model: the ids that would start,
 * resume, be preempted or be offloaded (short-circuits aside). Empty when nothing is due.
 */
export const decisionsAt = (model: SchedulerModel, at: number): string[] => {
  const copy = structuredClone(model);
  stepModel(copy, { type: 'tick', at });
  const changed: string[] = [];
  for (const [id, after] of copy.inputs) {
    const before = model.inputs.get(id)!.status;
    if (before !== after.status && after.status !== 'short_circuited' && !(before === 'inbox' && after.status === 'queue'))
      changed.push(`${id}:${before}->${after.status}`);
    if (after.toldBusy && !model.inputs.get(id)!.toldBusy) changed.push(`${id}:told busy`);
  }
  return changed;
};

/** The model's answer in the shape of `schedulerViewOf` / `readSchedulerView`. */
export const modelView = (model: SchedulerModel) => {
  const waiting = [...model.inbox, ...model.queue, ...model.pending];
  return {
    inbox: [...model.inbox],
    queue: [...model.queue],
    pending: [...model.pending],
    stack: [...model.stack],
    running: model.running,
    cancelBudget: waiting.filter((id) => input(model, id).budgeted),
  };
};

/** Every admitted input's status, by id. */
export const modelStatuses = (model: SchedulerModel): Record<string, ModelStatus> =>
  Object.fromEntries([...model.inputs.values()].map((t) => [t.id, t.status]));

/** Ids the scheduler still holds (waiting, running or suspended). */
export const liveIds = (model: SchedulerModel): string[] =>
  [...model.inputs.values()].filter((t) => !ENDED.includes(t.status)).map((t) => t.id);

export const endedIds = (model: SchedulerModel): string[] =>
  [...model.inputs.values()].filter((t) => ENDED.includes(t.status)).map((t) => t.id);
