/**
 * Reads the facts a scheduler emits, message by message, and checks each against the rules
 * it can be judged by on its own: an input is queued once and started at most once, only the
 * running task is preempted, completed or suspended, every preemption obeys the level rule,
 * the starvation guard and the cooldown, the stack is LIFO and bounded, a stop budgets exactly
 * what was waiting, and only budgeted inputs are short-circuited. It knows nothing of the
 * machine's code; it throws `FactRuleBroken` naming the fact and the rule.
 */
import { ENDED, WAITING, type ModelStatus } from './schedulerModel.ts';

export type LedgerFact = Readonly<{ type: string; data: Record<string, unknown> }>;
export type LedgerMessage = Readonly<{ type: string; at: number; inputId?: string }>;

type Entry = {
  readonly id: string;
  readonly kind: 'queued' | 'interrupt';
  readonly origin: string;
  readonly level: number;
  readonly order: number;
  status: ModelStatus;
  started: boolean;
  /** When it was preempted, each time. */
  readonly preemptedAt: number[];
  budgeted: boolean;
  /** Told that the agent is busy (BacklogAcknowledged); it stays queued. */
  toldBusy: boolean;
};

export class FactRuleBroken extends Error {}

export class SchedulerFactLedger {
  private readonly entries = new Map<string, Entry>();
  private readonly stack: string[] = [];
  private running: string | null = null;
  private now = 0;
  private arrivals = 0;
  /** Union of every stop's budget. */
  readonly budgeted = new Set<string>();
  /** How many facts were read, for messages. */
  private count = 0;
  /** The rules in force, as the facts adopted them. */
  private rules = 1;

  constructor(private readonly config: Readonly<{ preemptCooldownMs: number; offloadAfterMs: number }>) {}

  statuses(): Record<string, ModelStatus> {
    return Object.fromEntries([...this.entries.values()].map((e) => [e.id, e.status]));
  }

  chain(): { id: string; level: number }[] {
    return [...this.stack, ...(this.running ? [this.running] : [])].map((id) => ({ id, level: this.entry(id).level }));
  }

  /** Reads the facts one message produced, in order. */
  read(message: LedgerMessage, facts: readonly LedgerFact[]): void {
    const at = Math.max(this.now, message.at);
    this.now = at;
    let previous: LedgerFact | undefined;
    for (const fact of facts) {
      this.count += 1;
      this.rule(fact.data.at === at, fact, `carries the message's time ${at}`);
      if (fact.type === 'StopRequested')
        this.rule(message.type === 'stop' || message.type === 'cancel', fact, 'follows a stop or a cancel');
      this.apply(fact, previous, message);
      previous = fact;
    }
    this.rule(previous?.type !== 'TaskPreempted', previous, 'is followed by the start of the preempting input');
    this.afterMessage(message);
  }

  private fail(fact: LedgerFact | undefined, rule: string): never {
    throw new FactRuleBroken(
      `fact #${this.count} ${fact ? `${fact.type} ${JSON.stringify(fact.data)}` : '(none)'}: breaks the rule that it ${rule}`,
    );
  }

  private rule(ok: boolean, fact: LedgerFact | undefined, rule: string): void {
    if (!ok) this.fail(fact, rule);
  }

  private entry(id: string): Entry {
    const found = this.entries.get(id);
    if (!found) throw new FactRuleBroken(`no InputQueued was seen for '${id}'`);
    return found;
  }

  private waiting(): Entry[] {
    return [...this.entries.values()].filter((e) => WAITING.includes(e.status));
  }

  /** Best first: higher level, then earlier arrival. */
  private bestPending(): Entry | undefined {
    return this.waiting()
      .filter((e) => e.status === 'pending')
      .sort((a, b) => b.level - a.level || a.order - b.order)[0];
  }

  private apply(fact: LedgerFact, previous: LedgerFact | undefined, message?: LedgerMessage): void {
    const d = fact.data;
    switch (fact.type) {
      case 'InputQueued': {
        const id = d.inputId as string;
        this.rule(!this.entries.has(id), fact, 'queues an id never seen before (no input runs twice)');
        const kind = d.kind as 'queued' | 'interrupt';
        const level = d.level as number;
        this.rule(
          kind === 'queued' ? level === 0 && d.where === 'inbox' : level >= 1 && level <= 4 && d.where === 'pending',
          fact,
          'puts a queued input (L0) in the inbox and an interrupt (L1–L4) in pending',
        );
        this.rule(!(d.origin === 'plugin' && level === 4), fact, 'never gives a plugin input L4');
        this.entries.set(id, {
          id,
          kind,
          origin: d.origin as string,
          level,
          order: ++this.arrivals,
          status: kind === 'queued' ? 'inbox' : 'pending',
          started: false,
          preemptedAt: [],
          budgeted: false,
          toldBusy: false,
        });
        return;
      }
      case 'InboxPumped': {
        const ids = d.inputIds as string[];
        const inbox = this.waiting()
          .filter((e) => e.status === 'inbox')
          .sort((a, b) => a.order - b.order)
          .map((e) => e.id);
        this.rule(this.running === null, fact, 'happens only with nothing running');
        this.rule(JSON.stringify(ids) === JSON.stringify(inbox), fact, `moves the whole inbox [${inbox}] in arrival order`);
        for (const id of ids) this.entry(id).status = 'queue';
        return;
      }
      case 'TaskStarted': {
        const task = this.entry(d.taskId as string);
        this.rule(!task.started, fact, 'starts an input at most once (a suspended task is resumed, not started)');
        this.rule(task.status === 'pending' || task.status === 'queue', fact, 'starts an input waiting in pending or in the queue');
        this.rule(!task.budgeted, fact, 'never starts an input in the cancel budget of a stop');
        this.rule(this.running === null, fact, 'starts only when nothing runs');
        const preempting = previous?.type === 'TaskPreempted' && previous.data.by === task.id;
        this.rule(this.stack.length === 0 || preempting, fact, 'starts a new input on a non-empty stack only as a preemption');
        if (task.status === 'pending') {
          this.rule(this.bestPending() === task, fact, 'starts the best waiting interrupt (higher level, then earlier)');
        } else {
          this.rule(this.bestPending() === undefined, fact, 'starts a queued input only when no interrupt waits');
          const head = this.waiting()
            .filter((e) => e.status === 'queue')
            .sort((a, b) => a.order - b.order)[0];
          this.rule(head === task, fact, 'starts the head of the queue (first in, first out)');
        }
        task.status = 'running';
        task.started = true;
        this.running = task.id;
        return;
      }
      case 'TaskPreempted': {
        const task = this.entry(d.taskId as string);
        const by = this.entry(d.by as string);
        this.rule(this.running === task.id, fact, 'preempts the running task');
        this.rule(by.status === 'pending' && !by.budgeted, fact, 'is preempted by a waiting interrupt outside any cancel budget');
        const before = task.preemptedAt.length;
        const person = this.rules >= 3 && by.origin === 'user' && task.origin !== 'user';
        const effective = person ? task.level : Math.min(4, task.level + Math.min(before, 2));
        this.rule(
          by.level > effective,
          fact,
          person
            ? `is preempted by a person's input only from a lower level (L${task.level}, got L${by.level})`
            : `is preempted only by a level above min(4, ${task.level} + min(${before}, 2)) = ${effective} (got L${by.level})`,
        );
        this.rule(by.level !== task.level, fact, 'never lets the same level preempt the same level');
        this.rule(d.preemptCount === before + 1, fact, `counts preemptions (${before + 1})`);
        const last = task.preemptedAt[before - 1];
        this.rule(
          last === undefined || (d.at as number) - last >= this.config.preemptCooldownMs,
          fact,
          `is not preempted within ${this.config.preemptCooldownMs} ms of the last preemption (at ${last})`,
        );
        this.rule(d.stackDepth === this.stack.length + 1, fact, `reports the depth after the push (${this.stack.length + 1})`);
        task.preemptedAt.push(d.at as number);
        task.status = 'suspended';
        this.stack.push(task.id);
        this.running = null;
        return;
      }
      case 'TaskResumed': {
        const id = d.taskId as string;
        this.rule(this.running === null, fact, 'resumes only when nothing runs');
        this.rule(this.stack[this.stack.length - 1] === id, fact, `resumes the top of the stack [${this.stack}] (LIFO)`);
        this.stack.pop();
        this.rule(d.stackDepth === this.stack.length, fact, `reports the depth after the pop (${this.stack.length})`);
        this.entry(id).status = 'running';
        this.running = id;
        return;
      }
      case 'TaskCompleted': {
        const id = d.taskId as string;
        this.rule(this.running === id, fact, 'completes the running task');
        this.entry(id).status = 'completed';
        this.running = null;
        return;
      }
      case 'StopRequested': {
        const waiting = this.waiting()
          .map((e) => e.id)
          .sort();
        const budget = [...(d.cancelBudget as string[])].sort();
        if (message?.type === 'cancel') {
          // One input's stop: that input, if it waits; the running task, only if it is that input.
          const id = message.inputId!;
          const expected = waiting.includes(id) ? [id] : [];
          this.rule(
            JSON.stringify(budget) === JSON.stringify(expected),
            fact,
            `budgets only the cancelled input, if it waits [${expected}]`,
          );
          this.rule((d.runningTaskId ?? null) === (this.running === id ? id : null), fact, `names the running task only if it is ${id}`);
          this.rule(budget.length > 0 || this.running === id, fact, 'is recorded only when the cancel concerns a waiting or running input');
        } else {
          this.rule(
            JSON.stringify(budget) === JSON.stringify(waiting),
            fact,
            `budgets exactly the inputs waiting at the stop [${waiting}]`,
          );
          this.rule((d.runningTaskId ?? null) === this.running, fact, `names the running task (${this.running})`);
        }
        for (const id of budget) {
          this.entry(id).budgeted = true;
          this.budgeted.add(id);
        }
        return;
      }
      case 'InputShortCircuited': {
        const task = this.entry(d.inputId as string);
        this.rule(task.budgeted, fact, 'short-circuits only an input that was waiting at a stop');
        this.rule(WAITING.includes(task.status), fact, 'short-circuits a waiting input');
        task.status = 'short_circuited';
        return;
      }
      case 'BacklogAcknowledged': {
        const ids = d.inputIds as string[];
        this.rule(
          this.running !== null && d.runningTaskId === this.running,
          fact,
          'tells the backlog only while a task runs, and names it',
        );
        this.rule((d.busyForMs as number) >= this.config.offloadAfterMs, fact, `tells only after ${this.config.offloadAfterMs} ms busy`);
        const eligible = this.waiting()
          .filter((e) => (e.kind === 'queued' || this.rules >= 2) && !e.budgeted && !e.toldBusy)
          .map((e) => e.id)
          .sort();
        this.rule(
          JSON.stringify([...ids].sort()) === JSON.stringify(eligible),
          fact,
          `tells every waiting input outside a cancel budget (rules ${this.rules}: interrupts too from 2), once [${eligible}]`,
        );
        for (const id of ids) this.entry(id).toldBusy = true;
        return;
      }
      case 'BacklogOffloaded': {
        const ids = d.inputIds as string[];
        this.rule(this.running !== null && d.runningTaskId === this.running, fact, 'offloads only while a task runs, and names it');
        this.rule((d.busyForMs as number) >= this.config.offloadAfterMs, fact, `offloads only after ${this.config.offloadAfterMs} ms busy`);
        const eligible = this.waiting()
          .filter((e) => e.kind === 'queued' && !e.budgeted)
          .map((e) => e.id)
          .sort();
        this.rule(
          JSON.stringify([...ids].sort()) === JSON.stringify(eligible),
          fact,
          `offloads every queued input outside a cancel budget [${eligible}]`,
        );
        for (const id of ids) this.entry(id).status = 'offloaded';
        return;
      }
      case 'SchedulerRulesAdopted': {
        this.rule(message?.type === 'rules.adopt' && (d.version as number) > this.rules, fact, 'adopts newer rules when asked to');
        this.rules = d.version as number;
        return;
      }
      default:
        this.fail(fact, 'is a known scheduler fact');
    }
  }

  private afterMessage(message: LedgerMessage): void {
    const where = `after ${message.type}@${message.at}`;
    if (this.running === null) {
      if (this.stack.length > 0) throw new FactRuleBroken(`${where}: nothing runs but [${this.stack}] are suspended`);
      const waiting = this.waiting().map((e) => e.id);
      if (waiting.length > 0)
        throw new FactRuleBroken(`${where}: nothing runs but [${waiting}] wait (the scheduler must not idle with work)`);
    }
    const chain = this.chain();
    if (this.stack.length > 4 || chain.length > 5) throw new FactRuleBroken(`${where}: chain too deep: ${JSON.stringify(chain)}`);
    for (let i = 1; i < chain.length; i++) {
      if (chain[i]!.level <= chain[i - 1]!.level)
        throw new FactRuleBroken(`${where}: levels must strictly increase along the chain: ${JSON.stringify(chain)}`);
    }
  }

  /** At quiescence: every input ended once; exactly the budgeted ones were short-circuited. */
  checkQuiescent(): void {
    const live = [...this.entries.values()].filter((e) => !ENDED.includes(e.status)).map((e) => e.id);
    if (live.length > 0 || this.running !== null) throw new FactRuleBroken(`at quiescence, [${live}] have not ended`);
    for (const e of this.entries.values()) {
      const shortCircuited = e.status === 'short_circuited';
      if (shortCircuited !== e.budgeted) {
        throw new FactRuleBroken(`input '${e.id}' ended ${e.status} but was ${e.budgeted ? '' : 'not '}in a stop's cancel budget`);
      }
      if (e.status === 'offloaded' && e.kind !== 'queued') throw new FactRuleBroken(`interrupt '${e.id}' was offloaded`);
      if (e.status === 'completed' && !e.started) throw new FactRuleBroken(`input '${e.id}' completed without starting`);
    }
  }
}
