/**
 * The sink decision of the context actor. The spec's measured failure was pinning more recent
 * events than the budget can hold; here that is impossible by construction, checked for any
 * history and budget.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { decideSink, protectedCount, type ScoredEvent } from '../../machines/memory/contextPruning.ts';

const events = (tokens: number[], scores: number[] = []): ScoredEvent[] =>
  tokens.map((t, i) => ({ eventId: `e${i}`, tokens: t, score: scores[i] ?? 0 }));

describe('context pruning', () => {
  it('protects the configured number of recent events when the budget holds them', () => {
    expect(protectedCount(events([10, 10, 10, 10, 10]), { protectRecent: 3, keepTopK: 0, budgetTokens: 1_000 })).toBe(3);
  });

  it('protects fewer when the budget cannot hold the configured number: floor(budget / average tokens)', () => {
    // average 100 tokens, budget 250: only two fit, whatever is configured.
    expect(protectedCount(events([100, 100, 100, 100]), { protectRecent: 10, keepTopK: 0, budgetTokens: 250 })).toBe(2);
  });

  it('keeps the most relevant older events and sinks the rest, oldest first among equals', () => {
    const decision = decideSink(events([5, 5, 5, 5, 5, 5], [0.1, 0.9, 0.1, 0.5, 0, 0]), {
      protectRecent: 2,
      keepTopK: 2,
      budgetTokens: 1_000,
    });
    expect(decision.sink).toEqual(['e0', 'e2']);
    expect(decision.protectedCount).toBe(2);
  });

  it('sinks kept older events, least relevant first, while what stays is over the budget', () => {
    const decision = decideSink(events([40, 40, 40, 10, 10], [0.9, 0.5, 0.1, 0, 0]), { protectRecent: 2, keepTopK: 3, budgetTokens: 90 });
    expect(decision.sink).toEqual(['e1', 'e2']);
    expect(decision.keptTokens).toBe(60);
  });

  it('never protects more recent tokens than the budget holds on average, for any history (property)', () => {
    fc.assert(
      fc.property(
        fc.array(fc.integer({ min: 1, max: 2_000 }), { minLength: 1, maxLength: 60 }),
        fc.integer({ min: 0, max: 50 }),
        fc.integer({ min: 1, max: 20_000 }),
        (tokens, protectRecent, budgetTokens) => {
          const list = events(tokens);
          const n = protectedCount(list, { protectRecent, keepTopK: 0, budgetTokens });
          const average = tokens.reduce((a, b) => a + b, 0) / tokens.length;
          expect(n).toBeLessThanOrEqual(protectRecent);
          expect(n * average).toBeLessThanOrEqual(budgetTokens + 1e-9);
          const decision = decideSink(list, { protectRecent, keepTopK: 5, budgetTokens });
          // Nothing is both sunk and protected, and every event is either sunk or stays.
          const recent = new Set(list.slice(list.length - decision.protectedCount).map((e) => e.eventId));
          expect(decision.sink.some((id) => recent.has(id))).toBe(false);
        },
      ),
    );
  });
});
