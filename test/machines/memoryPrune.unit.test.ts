/**
 * The prune decision at every size: the protected-N bound (min(protectRecent, budget / average
 * tokens)) applies to a short conversation too, which is the case the spec measured.
 */
import { describe, expect, it } from 'vitest';
import type { ContextEventData } from '../../events/index.ts';
import { decidePrune, DEFAULT_PRUNE_CONFIG, nothingCanSink } from '../../machines/memory/index.ts';

/** An utterance of about `tokens` tokens (the decision counts four characters a token). */
const utterance = (i: number, tokens: number): ContextEventData => ({
  eventId: `e${i}`,
  role: i % 2 === 0 ? 'user' : 'agent',
  text: 'x'.repeat(tokens * 4),
  at: i,
});

describe('decidePrune', () => {
  it('10 events of 5,800 tokens under a 40,000-token budget: 6 are protected and the other 4 sink', () => {
    const context = Array.from({ length: 10 }, (_, i) => ({ event: utterance(i, 5_800), score: 1 }));
    const config = { ...DEFAULT_PRUNE_CONFIG, budgetTokens: 40_000 };
    const [sunk, ...more] = decidePrune('cli:ada', context, config, 100);
    expect(more).toEqual([]);
    expect(sunk!.data.protectedCount).toBe(6);
    expect(sunk!.data.docs.map((d) => d.docId)).toEqual(['d-e0', 'd-e1', 'd-e2', 'd-e3']);
  });

  it('decides nothing only when every event is within both bounds', () => {
    const config = { ...DEFAULT_PRUNE_CONFIG, budgetTokens: 40_000 };
    expect(
      nothingCanSink(
        Array.from({ length: 10 }, (_, i) => utterance(i, 4_000)),
        config,
      ),
    ).toBe(true);
    expect(
      nothingCanSink(
        Array.from({ length: 10 }, (_, i) => utterance(i, 4_001)),
        config,
      ),
    ).toBe(false);
    expect(
      nothingCanSink(
        Array.from({ length: 11 }, (_, i) => utterance(i, 10)),
        config,
      ),
    ).toBe(false);
    expect(
      decidePrune(
        's',
        Array.from({ length: 10 }, (_, i) => ({ event: utterance(i, 4_000), score: 0 })),
        config,
        1,
      ),
    ).toEqual([]);
  });
});
