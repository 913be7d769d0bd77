/** The times an utterance speaks of, read against when it was said; and whether it falls in a window a question names. */
import { describe, expect, it } from 'vitest';
import { saidOrSpokenOfWithin, spokenOfWindows } from '../../../projections/memory/recall/spokenOfTime.ts';

const DAY = 86_400_000;
const SAID = Date.UTC(2022, 4, 2, 13); // Monday 2 May 2022
const firstOfMay = { from: Date.UTC(2022, 4, 1), to: Date.UTC(2022, 4, 1) + DAY };

describe('spokenOfWindows', () => {
  it('reads relative words against when the utterance was said', () => {
    expect(spokenOfWindows('Joanna: I watched "The Lord of the Rings" last night!', SAID)).toEqual([firstOfMay]);
    expect(spokenOfWindows('I dyed my hair last week', SAID)).toEqual([{ from: Date.UTC(2022, 3, 25), to: Date.UTC(2022, 4, 2) }]);
  });

  it('reads the dates an utterance names, and nothing from one that names no time', () => {
    expect(spokenOfWindows('The show is on 9 June, 2022.', SAID)).toEqual([{ from: Date.UTC(2022, 5, 9), to: Date.UTC(2022, 5, 10) }]);
    expect(spokenOfWindows('I love turtles!', SAID)).toEqual([]);
  });
});

describe('saidOrSpokenOfWithin', () => {
  it('holds for what was said within a window', () => {
    expect(saidOrSpokenOfWithin({ text: 'I love turtles!', at: SAID }, [{ from: Date.UTC(2022, 4, 1), to: Date.UTC(2022, 5, 1) }])).toBe(
      true,
    );
  });

  it('holds for what speaks of a time within a window, said after it', () => {
    expect(saidOrSpokenOfWithin({ text: 'I watched it last night!', at: SAID }, [firstOfMay])).toBe(true);
    expect(saidOrSpokenOfWithin({ text: 'I watched it yesterday and loved it', at: SAID }, [firstOfMay])).toBe(true);
  });

  it('reads the times worked out before when it is given them, and works them out otherwise', () => {
    expect(saidOrSpokenOfWithin({ text: 'I love turtles!', at: SAID + 2 * DAY, spokenOf: [firstOfMay] }, [firstOfMay])).toBe(true);
    expect(saidOrSpokenOfWithin({ text: 'I watched it last night!', at: SAID, spokenOf: [] }, [firstOfMay])).toBe(false);
  });

  it('does not hold for a time that only overlaps the window, or for another day', () => {
    expect(saidOrSpokenOfWithin({ text: 'I was busy last week', at: SAID }, [firstOfMay])).toBe(false);
    expect(saidOrSpokenOfWithin({ text: 'I watched it two days ago', at: SAID }, [firstOfMay])).toBe(false);
    expect(saidOrSpokenOfWithin({ text: 'I watched it last night!', at: SAID + 2 * DAY }, [firstOfMay])).toBe(false);
  });
});
