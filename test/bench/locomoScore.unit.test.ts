import { describe, expect, it } from 'vitest';
import { aggregate, estimatedTokens, percentile, recallAtK, recallWithinTokens } from '../../bench/locomo/score.ts';

const item = (...cites: string[]) => ({ cites });

describe('recallAtK', () => {
  it('counts the share of evidence among the first k distinct cited turns', () => {
    expect(recallAtK([item('D1:1'), item('D1:2'), item('D1:3')], ['D1:2', 'D9:9'], 3)).toBe(0.5);
  });

  it('an item citing many turns spends k slots, so it cannot inflate the score', () => {
    const wide = item(...Array.from({ length: 50 }, (_, i) => `D1:${i + 1}`));
    expect(recallAtK([wide], ['D1:3', 'D1:40'], 10)).toBe(0.5);
    expect(recallAtK([wide, item('D1:40')], ['D1:40'], 10)).toBe(0);
  });

  it('counts a turn cited twice once, so later turns still fit', () => {
    const items = [item('D1:1', 'D1:1'), item('D1:1', 'D1:2'), item('D1:3')];
    expect(recallAtK(items, ['D1:3'], 3)).toBe(1);
  });

  it('cuts at k after flattening, inside an item', () => {
    expect(recallAtK([item('D1:1', 'D1:2', 'D1:3')], ['D1:3'], 2)).toBe(0);
    expect(recallAtK([item('D1:1', 'D1:2', 'D1:3')], ['D1:3'], 3)).toBe(1);
  });

  it('is 0 when no evidence turn is recalled, or nothing is', () => {
    expect(recallAtK([item('D1:1')], ['D2:2'], 10)).toBe(0);
    expect(recallAtK([], ['D2:2'], 10)).toBe(0);
  });

  it('counts duplicate evidence once', () => {
    expect(recallAtK([item('D1:1')], ['D1:1', 'D1:1', 'D1:2'], 10)).toBe(0.5);
  });

  it('rejects k < 1 and empty evidence', () => {
    expect(() => recallAtK([], ['D1:1'], 0)).toThrow(RangeError);
    expect(() => recallAtK([], [], 10)).toThrow(RangeError);
  });
});

describe('aggregate', () => {
  it('gives per-category means and an overall mean over questions, not over categories', () => {
    const a = aggregate([
      { category: 4, recall: 1 },
      { category: 4, recall: 1 },
      { category: 4, recall: 1 },
      { category: 1, recall: 0 },
    ]);
    expect(a.overall).toEqual({ mean: 0.75, count: 4 });
    expect(a.byCategory).toEqual({ '1': { mean: 0, count: 1 }, '4': { mean: 1, count: 3 } });
    expect(Object.keys(a.byCategory)).toEqual(['1', '4']);
  });

  it('of nothing is NaN with a count of 0', () => {
    const a = aggregate([]);
    expect(a.overall.count).toBe(0);
    expect(a.overall.mean).toBeNaN();
    expect(a.byCategory).toEqual({});
  });
});

describe('percentile', () => {
  it('is nearest-rank', () => {
    const xs = Array.from({ length: 100 }, (_, i) => 100 - i);
    expect(percentile(xs, 50)).toBe(50);
    expect(percentile(xs, 99)).toBe(99);
    expect(percentile([7], 99)).toBe(7);
  });
});

describe('recallWithinTokens', () => {
  const item = (text: string, ...cites: string[]) => ({ text, cites });
  it('counts the evidence of the items that fit the budget in rank order, and stops at the first that does not', () => {
    const items = [item('x'.repeat(400), 'D1:1'), item('y'.repeat(4000), 'D1:2'), item('z'.repeat(40), 'D1:3')];
    // 100, 1,000 and 10 tokens: all three fit in 2,000.
    expect(recallWithinTokens(items, ['D1:1', 'D1:3'], 2_000)).toBe(1);
    // In 1,000 the second would bring it to 1,100: the list ends there, the small third one with it.
    expect(recallWithinTokens(items, ['D1:1', 'D1:3'], 1_000)).toBe(0.5);
    expect(recallWithinTokens(items, ['D1:1'], 99)).toBe(0);
    expect(estimatedTokens('abcde')).toBe(2);
  });
});
