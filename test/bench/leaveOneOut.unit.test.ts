/** Leave-one-conversation-out selection: tune on the others, score on the one held out. */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { leaveOneOut } from '../../bench/locomo/leaveOneOut.ts';
import type { QuestionScore } from '../../bench/locomo/score.ts';

const q = (recall: number, category = 1): QuestionScore => ({ category, recall });

describe('leaveOneOut', () => {
  it('scores each conversation with the choice best on the others, so a choice that only fits them shows', () => {
    // Choice 0 is perfect on conversations 0 and 1 and useless on 2; choice 1 is middling everywhere.
    const scores = [
      [[q(1)], [q(1)], [q(0, 2)]],
      [[q(0.5)], [q(0.5)], [q(0.5, 2)]],
    ];
    const result = leaveOneOut(scores);
    expect(result.rounds.map((r) => [r.conversation, r.chosen, r.heldOut])).toEqual([
      [0, 0, 1], // trained on 1 and 2: 0.5 each, the first choice kept on a tie
      [1, 0, 1],
      [2, 0, 0], // trained on 0 and 1, where choice 0 is perfect: it fails the held-out one
    ]);
    expect(result.rounds[2]!.trained).toBe(1);
    expect(result.pooled.overall.mean).toBeCloseTo(2 / 3, 12);
    expect(result.pooled.byCategory['2']!.mean).toBe(0);
    expect(result.inSample.chosen).toBe(0);
  });

  it('takes the other choice when it does better on the conversations trained on', () => {
    const scores = [
      [[q(0.2)], [q(0.2)], [q(0.9)]],
      [[q(0.6)], [q(0.6)], [q(0.1)]],
    ];
    expect(leaveOneOut(scores).rounds.map((r) => r.chosen)).toEqual([0, 0, 1]);
  });

  it('refuses what it cannot select from', () => {
    expect(() => leaveOneOut([])).toThrow(/no choices/);
    expect(() => leaveOneOut([[[q(1)]]])).toThrow(/two conversations/);
    expect(() => leaveOneOut([[[q(1)], [q(1)]], [[q(1)]]])).toThrow(/every conversation/);
  });

  it('property: a choice best on every conversation is chosen in every round, and held out it scores as in sample', () => {
    const recall = fc.double({ min: 0, max: 1, noNaN: true });
    fc.assert(
      fc.property(
        fc.array(fc.array(fc.array(recall, { minLength: 1, maxLength: 4 }), { minLength: 2, maxLength: 4 }), {
          minLength: 1,
          maxLength: 4,
        }),
        (raw) => {
          const conversations = Math.min(...raw.map((byConversation) => byConversation.length));
          const others = raw.map((byConversation) => byConversation.slice(0, conversations).map((xs) => xs.map((x) => q(x * 0.9))));
          const best = Array.from({ length: conversations }, () => [q(1)]);
          const result = leaveOneOut([...others, best]);
          for (const round of result.rounds) expect(round.chosen).toBe(others.length);
          expect(result.pooled).toEqual(result.inSample.aggregate);
        },
      ),
    );
  });
});
