/**
 * The context budget (spec: "Context Budget"): a working band of min(window × 0.8, 600 000)
 * tokens, a third of what is left after the fixed part for memory recall and two thirds for
 * context events. Budgets are ceilings, not fill targets. Pure.
 */

export const MAX_TARGET_TOKENS = 600_000;
export const TARGET_USAGE = 0.8;
/** Used when a model declares no window: small enough for any current model. */
export const FALLBACK_CONTEXT_WINDOW = 8_192;

/** What a turn's fixed part (persona, timeline, runtime block, tool definitions, input) costs in a typical daemon. */
export const TYPICAL_FIXED_TOKENS = 1_500;

export type TokenBudget = Readonly<{
  window: number;
  /** True when the model declared no window and the fallback was used (warn the operator). */
  windowAssumed: boolean;
  target: number;
  fixed: number;
  memoryRecall: number;
  contextEvents: number;
}>;

export const computeTokenBudget = (declaredWindow: number | undefined, fixedTokens: number): TokenBudget => {
  const windowAssumed = declaredWindow === undefined || !(declaredWindow > 0);
  const window = windowAssumed ? FALLBACK_CONTEXT_WINDOW : Math.floor(declaredWindow!);
  const target = Math.min(Math.floor(window * TARGET_USAGE), MAX_TARGET_TOKENS);
  const fixed = Math.max(0, Math.floor(fixedTokens));
  const free = Math.max(0, target - fixed);
  const memoryRecall = Math.floor(free / 3);
  return { window, windowAssumed, target, fixed, memoryRecall, contextEvents: free - memoryRecall };
};
