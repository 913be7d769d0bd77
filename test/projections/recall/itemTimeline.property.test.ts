/** The timeline finds exactly the live items with a time within the windows, whatever order times came in. */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ItemTimeline } from '../../../projections/memory/recall/itemTimeline.ts';

const time = fc.integer({ min: 0, max: 3_000 });
const window = fc.tuple(time, fc.integer({ min: 0, max: 400 })).map(([from, span]) => ({ from, to: from + span }));

describe('item timeline (property)', () => {
  it('finds the slots of the live items said at or speaking of a time within a window, each once, or says there are more than asked for', () => {
    fc.assert(
      fc.property(
        // Mostly in order (as things are said), some out of order (the times an utterance speaks of).
        // size 'max': by default fast-check stops at about ten puts, never past the timeline's first 64 entries.
        fc.array(fc.tuple(fc.nat(150), fc.array(time, { minLength: 1, maxLength: 3 }), fc.boolean()), { maxLength: 300, size: 'max' }),
        fc.array(window, { minLength: 1, maxLength: 3 }),
        fc.array(fc.nat(150), { maxLength: 40 }),
        fc.integer({ min: 0, max: 200 }),
        fc.boolean(),
        (puts, windows, removedAt, atMost, rebuilt) => {
          // Out-of-order entries merged into the sorted run after 8 of them, so runs of a few dozen take every path.
          const timeline = new ItemTimeline(8);
          const model = new Map<string, number[]>();
          // Item n is in slot n + 1000, so a slot is never read for an id.
          const slotOf = (id: string): number => Number(id.slice(1)) + 1000;
          let clock = 0;
          for (const [n, times, inOrder] of puts) {
            const id = `i${n}`;
            if (inOrder) clock += 1;
            const at = inOrder ? clock : times[0]!;
            const all = [at, ...times.slice(1)];
            timeline.add(id, slotOf(id), all);
            model.set(id, [...(model.get(id) ?? []), ...all]);
          }
          const removed = new Set(removedAt.map((n) => `i${n}`));
          const live = (id: string) => model.has(id) && !removed.has(id);
          if (rebuilt) {
            timeline.rebuild([...model].filter(([id]) => live(id)).map(([id, times]) => [id, slotOf(id), times] as const));
            expect(timeline.entries).toBe([...model].filter(([id]) => live(id)).reduce((sum, [, t]) => sum + t.length, 0));
          }
          const expected = new Set(
            [...model]
              .filter(([id, times]) => live(id) && times.some((t) => windows.some((w) => t >= w.from && t <= w.to)))
              .map(([id]) => slotOf(id)),
          );
          const found = timeline.within(windows, (id, slot) => slot === slotOf(id) && live(id), atMost);
          if (expected.size > atMost) expect(found).toBeUndefined();
          else expect(found).toEqual(expected);
        },
      ),
      // Hundreds of puts can take a minute to shrink: a failure is reported, shrunk as far as it got, after 20 s
      // (failOnInterrupt: a run cut short with no failure found fails too, rather than pass on fewer runs).
      { numRuns: 300, plugins: [fc.interruptAfterTimeLimit(20_000, { failOnInterrupt: true })] },
    );
  });
});
