/**
 * The heartbeat loop against a model, for any run of clock readings (forwards, still, and back):
 * it fires exactly when a reading reaches its due time and is not behind the loop, a firing
 * covers the span since the previous firing or start-over, and after any reading the loop is due
 * at most one interval later, so no clock set back can leave it waiting for years.
 */
import fc from 'fast-check';
import { createActor } from 'xstate';
import { describe, expect, it } from 'vitest';
import { heartbeatMachine, type HeartbeatFact, startsOver } from '../../machines/memory/heartbeatMachine.ts';

const YEAR = 365 * 24 * 3_600_000;

describe('heartbeat machine (property)', () => {
  it('fires as the model says and is never due more than one interval after the latest reading', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 10_000 }),
        fc.integer({ min: 0, max: YEAR }),
        fc.option(fc.integer({ min: 0, max: 2 * YEAR }), { nil: undefined }),
        fc.array(fc.integer({ min: -YEAR, max: 30_000 }), { maxLength: 40 }),
        (intervalMs, startAt, leftOffAt, steps) => {
          const fired: HeartbeatFact[] = [];
          const input = { loop: 'merge' as const, intervalMs, startAt, ...(leftOffAt !== undefined ? { since: leftOffAt } : {}) };
          const actor = createActor(heartbeatMachine, { input });
          actor.on('*', (fact) => fired.push(fact));
          actor.start();
          expect(startsOver(input)).toBe(leftOffAt !== undefined && leftOffAt > startAt);
          let since = leftOffAt !== undefined && leftOffAt <= startAt ? leftOffAt : startAt;
          let dueAt = since + intervalMs;
          expect(actor.getSnapshot().context.dueAt).toBeLessThanOrEqual(startAt + intervalMs);
          let at = startAt;
          for (const step of steps) {
            at = Math.max(0, at + step);
            const before = fired.length;
            actor.send({ type: 'CLOCK', at });
            if (at < since) {
              expect(fired.slice(before)).toEqual([{ type: 'HeartbeatStartedOver', data: { loop: 'merge', at, leftOffAt: since } }]);
              since = at;
              dueAt = at + intervalMs;
            } else if (at >= dueAt) {
              expect(fired.slice(before)).toEqual([{ type: 'HeartbeatFired', data: { loop: 'merge', at, since } }]);
              since = at;
              dueAt = at + intervalMs;
            } else {
              expect(fired.length).toBe(before);
            }
            expect(actor.getSnapshot().context).toMatchObject({ since, dueAt });
            expect(dueAt).toBeLessThanOrEqual(at + intervalMs);
          }
          actor.stop();
        },
      ),
      { numRuns: 500 },
    );
  });
});
