/**
 * Stage handlers that let their calls time out, counted in a row per handler. Every turn waits
 * on each stage's handlers up to the stage timeout, so a handler that never answers would cost
 * every turn that much for as long as its plugin runs; once it has missed `limit` calls in a row
 * the hub detaches it (its plugin keeps its tools and channels). Its plugin is then `stalled`: it
 * may not register stage handlers again (each would cost `limit` more turns) until it restarts.
 */

/** Calls in a row a stage handler may leave unanswered before it is detached. */
export const STAGE_MISSES_BEFORE_DETACH = 3;

export class UnansweredStages {
  private readonly missed = new Map<string, number>();
  private readonly stalledPlugins = new Set<string>();

  constructor(readonly limit: number = STAGE_MISSES_BEFORE_DETACH) {}

  /** The handler answered (or failed in its own words): it starts again from none missed. */
  answered(handlerId: string): void {
    this.missed.delete(handlerId);
  }

  /** `plugin`'s handler timed out; whether that makes `limit` in a row (then the plugin is stalled). */
  timedOut(plugin: string, handlerId: string): boolean {
    const missed = (this.missed.get(handlerId) ?? 0) + 1;
    if (missed < this.limit) {
      this.missed.set(handlerId, missed);
      return false;
    }
    this.missed.delete(handlerId);
    this.stalledPlugins.add(plugin);
    return true;
  }

  /** Whether a handler of `plugin` was detached since it last started. */
  stalled(plugin: string): boolean {
    return this.stalledPlugins.has(plugin);
  }

  /** The plugin went (to be started again, or not): nothing to remember of it or its handlers. */
  forget(plugin: string, handlerIds: readonly string[]): void {
    this.stalledPlugins.delete(plugin);
    for (const id of handlerIds) this.missed.delete(id);
  }
}
