/** Neighbours of an utterance in its scope: what came before weighs more than what came after. */
import { describe, expect, it } from 'vitest';
import { NEIGHBOUR_WEIGHTS, UtteranceSequence } from '../../../projections/memory/recall/utteranceSequence.ts';

describe('UtteranceSequence', () => {
  const sequence = new UtteranceSequence();
  for (const [i, text] of ['a', 'b', 'c', 'd', 'e'].entries()) sequence.append('s', `e${i}`, text, i * 1_000);
  sequence.append('other', 'x0', 'elsewhere', 0);

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
    sequence.append('s', 'e1', 'b again', 9_000);
    expect(sequence.neighboursOf('e2')[0]).toEqual({ text: 'b', weight: NEIGHBOUR_WEIGHTS.before[0] });
  });

  it('with a pause given, leaves out the utterances on the far side of a longer pause, both ways', () => {
    const HOUR = 3_600_000;
    const paused = new UtteranceSequence(NEIGHBOUR_WEIGHTS, HOUR);
    paused.append('s', 'm0', 'morning', 0);
    paused.append('s', 'm1', 'still morning', 60_000);
    paused.append('s', 'n0', 'next day', 26 * HOUR);
    paused.append('s', 'n1', 'next day too', 26 * HOUR + 60_000);
    expect(paused.neighboursOf('n0')).toEqual([{ text: 'next day too', weight: NEIGHBOUR_WEIGHTS.after[0] }]);
    expect(paused.neighboursOf('m1')).toEqual([{ text: 'morning', weight: NEIGHBOUR_WEIGHTS.before[0] }]);
    expect(paused.earlierNeighbours('n0')).toEqual([]);
    expect(paused.earlierNeighbours('n1')).toEqual([{ eventId: 'n0', weight: NEIGHBOUR_WEIGHTS.after[0] }]);
    expect(paused.toState()).toEqual([
      {
        scope: 's',
        eventIds: ['m0', 'm1', 'n0', 'n1'],
        texts: ['morning', 'still morning', 'next day', 'next day too'],
        ats: [0, 60_000, 26 * HOUR, 26 * HOUR + 60_000],
      },
    ]);
  });
});
