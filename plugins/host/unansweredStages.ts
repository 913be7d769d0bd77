/**
 * Stage handlers that let their calls time out, counted in a row per handler. Every turn waits
 * on each stage's handlers up to the stage timeout, so a handler that never answers would cost
 * every turn that much for as long as its plugin runs; once it has missed `limit` calls in a row
 * the hub detaches it (its plugin keeps its tools and channels, and a restart registers it anew).
 */

/** Calls in a row a stage handler may leave unanswered before it is detached. */
export const STAGE_MISSES_BEFORE_DETACH = 3;

export class UnansweredStages {
  private readonly missed = new Map<string, number>();

  constructor(readonly limit: number = STAGE_MISSES_BEFORE_DETACH) {}

  /** The handler answered (or failed in its own words): it starts again from none missed. */
  answered(handlerId: string): void {
    this.missed.delete(handlerId);
  }

  /** The handler's call timed out; whether that makes `limit` in a row (counting starts again after). */
  timedOut(handlerId: string): boolean {
    const missed = (this.missed.get(handlerId) ?? 0) + 1;
    if (missed < this.limit) {
      this.missed.set(handlerId, missed);
      return false;
    }
    this.missed.delete(handlerId);
    return true;
  }

  /** The handler left (its plugin went, or it was detached): nothing to remember of it. */
  forget(handlerIds: readonly string[]): void {
    for (const id of handlerIds) this.missed.delete(id);
  }
}
