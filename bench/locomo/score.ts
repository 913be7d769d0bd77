/** Evidence recall@k and its aggregates: pure functions over recalled citations. */
import type { RecalledItem } from './recallSystem.ts';

/**
 * Share of `evidence` turns among the first `k` distinct turns cited by `items`, flattened in
 * rank order (each item's `cites` in its own order). An item citing many turns spends that
 * many of the k slots, so it cannot inflate the score.
 *
 * @example
 * recallAtK([{ cites: ['D1:1', 'D1:2'] }, { cites: ['D1:1', 'D2:5'] }], ['D2:5'], 3) // 1
 */
export const recallAtK = (items: readonly Pick<RecalledItem, 'cites'>[], evidence: readonly string[], k: number): number => {
  if (!Number.isSafeInteger(k) || k < 1) throw new RangeError(`recallAtK: k must be a positive integer; got ${k}`);
  const wanted = new Set(evidence);
  if (wanted.size === 0) throw new RangeError('recallAtK: a question needs at least one evidence turn');
  const kept = new Set<string>();
  for (const item of items) {
    for (const diaId of item.cites) {
      if (kept.size >= k) break;
      kept.add(diaId);
    }
    if (kept.size >= k) break;
  }
  let found = 0;
  for (const diaId of wanted) if (kept.has(diaId)) found++;
  return found / wanted.size;
};

/** What a recalled text costs in the prompt, estimated as a quarter of its characters (no tokenizer ships here). */
export const estimatedTokens = (text: string): number => Math.ceil(text.length / 4);

/**
 * Share of `evidence` turns cited by the items that fit, in rank order, within `budget` tokens of
 * recalled text: the first item that would pass the budget ends the list, as a prompt would.
 */
export const recallWithinTokens = (
  items: readonly Pick<RecalledItem, 'cites' | 'text'>[],
  evidence: readonly string[],
  budget: number,
): number => {
  const wanted = new Set(evidence);
  if (wanted.size === 0) throw new RangeError('recallWithinTokens: a question needs at least one evidence turn');
  const kept = new Set<string>();
  let spent = 0;
  for (const item of items) {
    spent += estimatedTokens(item.text);
    if (spent > budget) break;
    for (const diaId of item.cites) kept.add(diaId);
  }
  let found = 0;
  for (const diaId of wanted) if (kept.has(diaId)) found++;
  return found / wanted.size;
};

export type QuestionScore = Readonly<{ category: number; recall: number }>;
export type Mean = Readonly<{ mean: number; count: number }>;
export type Aggregate = Readonly<{
  /** Mean over all questions (not the mean of the category means). */
  overall: Mean;
  /** Keyed by category number as a string, in ascending order. */
  byCategory: Readonly<Record<string, Mean>>;
}>;

const meanOf = (xs: readonly number[]): Mean => ({
  mean: xs.length === 0 ? Number.NaN : xs.reduce((a, b) => a + b, 0) / xs.length,
  count: xs.length,
});

/** Per-category means and the overall mean over every question. */
export const aggregate = (scores: readonly QuestionScore[]): Aggregate => {
  const groups = new Map<number, number[]>();
  for (const s of scores) {
    const group = groups.get(s.category) ?? [];
    group.push(s.recall);
    groups.set(s.category, group);
  }
  const byCategory = Object.fromEntries([...groups.keys()].sort((a, b) => a - b).map((c) => [String(c), meanOf(groups.get(c)!)]));
  return { overall: meanOf(scores.map((s) => s.recall)), byCategory };
};

/** Nearest-rank percentile (p in (0, 100]) of a non-empty sample. */
export const percentile = (xs: readonly number[], p: number): number => {
  if (xs.length === 0) return Number.NaN;
  const sorted = [...xs].sort((a, b) => a - b);
  const rank = Math.min(sorted.length, Math.max(1, Math.ceil((p / 100) * sorted.length)));
  return sorted[rank - 1]!;
};
