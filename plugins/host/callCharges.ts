/**
 * What each plugin's calls have cost the person lately. A turn waits on every stage's handlers
 * up to the stage timeout and on a tool up to the tool timeout, so a plugin whose calls time out,
 * or answer (or fail) only after seconds, costs the person that time, for as long as it runs.
 * Each call is charged what it cost; once a plugin's charges within the last `windowMs` reach
 * `budget`, the hub detaches what it holds of that kind until it is started afresh. Charges are
 * kept by time, not per call, so quick answers in between, spare handlers or a crash restart do
 * not wash them out; a fresh start forgets them.
 */

/** Stage calls: the time each took past STAGE_FREE_MS (a timeout counts whole), 15 s of it within 10 minutes. */
export const STAGE_FREE_MS = 250;
export const STAGE_BUDGET_MS = 15_000;
/** Tool calls are often slow by nature: only timeouts are charged, 2 of them within 10 minutes. */
export const TOOL_TIMEOUTS_BUDGET = 2;
/** A tool call the plugin ends by going away after this long (half the default tool timeout) is charged as a timeout. */
export const TOOL_LONG_WAIT_MS = 30_000;
export const CALLS_WINDOW_MS = 600_000;

/** What a stage call that took `ms` costs the person (a call that timed out costs its whole timeout). */
export const stageCallCost = (ms: number): number => Math.max(0, ms - STAGE_FREE_MS);

export class CallCharges {
  /** Per plugin, its charges in order: when, and how much. */
  private readonly charges = new Map<string, { at: number; cost: number }[]>();

  constructor(
    readonly budget: number,
    readonly windowMs: number = CALLS_WINDOW_MS,
  ) {}

  /** Charges `plugin` `cost` at `at`; whether its charges within the window now reach the budget (then they start again). */
  charge(plugin: string, at: number, cost: number): boolean {
    if (cost <= 0) return false;
    const kept = (this.charges.get(plugin) ?? []).filter((c) => c.at > at - this.windowMs);
    kept.push({ at, cost });
    if (kept.reduce((sum, c) => sum + c.cost, 0) < this.budget) {
      this.charges.set(plugin, kept);
      return false;
    }
    this.charges.delete(plugin);
    return true;
  }

  /** The plugin was started afresh: its charges are forgotten. */
  forget(plugin: string): void {
    this.charges.delete(plugin);
  }
}

export type ChargedKind = 'stages' | 'tools';

/**
 * A hub's two ledgers (stage calls by time, tool calls by timeouts) and the plugins barred from
 * each kind: a plugin is barred the moment its charges reach the budget, before the detach is
 * in the log, so no call waits on it meanwhile; a fresh start lifts the bar and forgets the charges.
 */
export class CallBudgets {
  private readonly charges = { stages: new CallCharges(STAGE_BUDGET_MS), tools: new CallCharges(TOOL_TIMEOUTS_BUDGET) };
  private readonly barred = { stages: new Set<string>(), tools: new Set<string>() };

  isBarred(kind: ChargedKind, plugin: string): boolean {
    return this.barred[kind].has(plugin);
  }

  /**
   * Charges `plugin` what a call of `kind` cost at `at`; `last` says what that call did.
   * @returns why it is detached now, when this charge reached the budget (it is barred from then on).
   */
  charge(kind: ChargedKind, plugin: string, at: number, cost: number, last: string): string | undefined {
    if (this.barred[kind].has(plugin) || !this.charges[kind].charge(plugin, at, cost)) return undefined;
    this.barred[kind].add(plugin);
    const minutes = CALLS_WINDOW_MS / 60_000;
    return kind === 'stages'
      ? `its stage handlers held turns up ${STAGE_BUDGET_MS / 1_000} s within ${minutes} minutes, timing out or answering slowly (the last: ${last})`
      : `${TOOL_TIMEOUTS_BUDGET} of its tool calls within ${minutes} minutes got no answer in time`;
  }

  /** The plugin was started afresh: what its calls cost before is forgotten (a crash restart forgets nothing). */
  freshStart(plugin: string): void {
    for (const kind of ['stages', 'tools'] as const) {
      this.charges[kind].forget(plugin);
      this.barred[kind].delete(plugin);
    }
  }
}
