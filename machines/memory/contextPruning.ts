/**
 * Which context events sink to cold context (spec: "keep topK + last 10"), as a pure decision
 * from the scores the context actor computed. The most recent N events are protected, with
 * N = min(configured, floor(budget / average event tokens)) so pinning can never hold more
 * than the budget; of the older ones the `keepTopK` most relevant stay; the rest sink, and
 * more of the lowest-scored sink while what stays is still over the budget.
 */

export type ScoredEvent = Readonly<{ eventId: string; tokens: number; score: number }>;

export type PruneConfig = Readonly<{
  /** Recent events protected from sinking (the spec's 10), before the budget bounds it. */
  protectRecent: number;
  /** Older events kept for their relevance to the input. */
  keepTopK: number;
  /** Tokens the context events may take (two thirds of the working band). */
  budgetTokens: number;
}>;

export const DEFAULT_PRUNE_CONFIG: PruneConfig = { protectRecent: 10, keepTopK: 20, budgetTokens: 24_000 };

/** How many recent events are protected: never more than the budget holds on average. */
export const protectedCount = (events: readonly ScoredEvent[], config: PruneConfig): number => {
  if (events.length === 0) return 0;
  const average = Math.max(1, events.reduce((n, e) => n + e.tokens, 0) / events.length);
  return Math.max(0, Math.min(config.protectRecent, Math.floor(config.budgetTokens / average), events.length));
};

export type PruneDecision = Readonly<{ sink: readonly string[]; protectedCount: number; keptTokens: number }>;

/**
 * `events` in time order (oldest first). Ties in score sink the older event first, so the same
 * input always gives the same decision.
 */
export const decideSink = (events: readonly ScoredEvent[], config: PruneConfig): PruneDecision => {
  const n = protectedCount(events, config);
  const recent = events.slice(events.length - n);
  const older = events.slice(0, events.length - n).map((e, index) => ({ ...e, index }));
  const byRelevance = [...older].sort((a, b) => b.score - a.score || b.index - a.index);
  const kept = new Set(byRelevance.slice(0, Math.max(0, config.keepTopK)).map((e) => e.eventId));
  let keptTokens = recent.reduce((t, e) => t + e.tokens, 0) + older.filter((e) => kept.has(e.eventId)).reduce((t, e) => t + e.tokens, 0);
  // Over the budget: the least relevant of the kept older events sink too.
  for (let i = Math.min(byRelevance.length, config.keepTopK) - 1; i >= 0 && keptTokens > config.budgetTokens; i--) {
    const e = byRelevance[i]!;
    kept.delete(e.eventId);
    keptTokens -= e.tokens;
  }
  return { sink: older.filter((e) => !kept.has(e.eventId)).map((e) => e.eventId), protectedCount: n, keptTokens };
};
