/** Neighbours of an utterance in its scope: what came before weighs more than what came after. */
import { describe, expect, it } from 'vitest';
import { NEIGHBOUR_WEIGHTS, UtteranceSequence } from '../../../projections/memory/recall/utteranceSequence.ts';

describe('UtteranceSequence', () => {
  const sequence = new UtteranceSequence();
  for (const [i, text] of ['a', 'b', 'c', 'd', 'e'].entries()) sequence.append('s', `e${i}`, text);
  sequence.append('other', 'x0', 'elsewhere');

  it('gives the utterances around one, by distance, within its scope only', () => {
    const [b1, b2] = NEIGHBOUR_WEIGHTS.before;
    const [a1, a2] = NEIGHBOUR_WEIGHTS.after;
    expect(sequence.neighboursOf('e2')).toEqual([
      { text: 'b', weight: b1 },
      { text: 'a', weight: b2 },
      { text: 'd', weight: a1 },
      { text: 'e', weight: a2 },
    ]);
    expect(sequence.neighboursOf('x0')).toEqual([]);
    expect(sequence.neighboursOf('unknown')).toEqual([]);
  });

  it('weighs the utterance just before most', () => {
    expect(NEIGHBOUR_WEIGHTS.before[0]).toBe(Math.max(...NEIGHBOUR_WEIGHTS.before, ...NEIGHBOUR_WEIGHTS.after));
  });

  it('names the earlier utterances a new one is an after-neighbour of, with its weight for each', () => {
    expect(sequence.earlierNeighbours('e4')).toEqual([
      { eventId: 'e3', weight: NEIGHBOUR_WEIGHTS.after[0] },
      { eventId: 'e2', weight: NEIGHBOUR_WEIGHTS.after[1] },
    ]);
  });

  it('keeps the first place of an utterance appended twice', () => {
    sequence.append('s', 'e1', 'b again');
    expect(sequence.neighboursOf('e2')[0]).toEqual({ text: 'b', weight: NEIGHBOUR_WEIGHTS.before[0] });
  });
});
