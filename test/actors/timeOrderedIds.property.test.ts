/** The event log's ids: UUIDv7 (RFC 9562), the time first, so ids made later sort after. */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { timeOrderedIds, uuidV7 } from '../../actors/clock/systemClock.ts';

const UUID_V7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
const MAX_MS = 2 ** 48 - 1;
const random16 = fc.uint8Array({ minLength: 16, maxLength: 16 });

const msOf = (id: string): number => Number.parseInt(id.replaceAll('-', '').slice(0, 12), 16);

describe('uuidV7', () => {
  it('is a version 7 UUID whose first 48 bits are the time, whatever the random bytes', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: MAX_MS }), random16, (ms, random) => {
        const id = uuidV7(ms, random);
        expect(id).toMatch(UUID_V7);
        expect(msOf(id)).toBe(ms);
      }),
    );
  });

  it('sorts as its time does: a later ms gives a greater id', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: MAX_MS - 1 }),
        fc.integer({ min: 1, max: 1_000_000 }),
        random16,
        random16,
        (ms, later, a, b) => {
          expect(uuidV7(ms, a) < uuidV7(Math.min(MAX_MS, ms + later), b)).toBe(true);
        },
      ),
    );
  });

  it('keeps the random bytes it does not overwrite, and leaves the bytes given as they were', () => {
    const random = new Uint8Array(16).fill(0xff);
    expect(uuidV7(0, random)).toBe('00000000-0000-7fff-bfff-ffffffffffff');
    expect([...random]).toEqual(new Array(16).fill(0xff));
  });
});

describe('timeOrderedIds', () => {
  it('makes distinct ids, each no earlier than the one before it (to the ms), stamped now', () => {
    const before = Date.now();
    const ids = Array.from({ length: 5_000 }, () => timeOrderedIds.next());
    const after = Date.now();
    expect(new Set(ids).size).toBe(ids.length);
    for (const id of ids) expect(id).toMatch(UUID_V7);
    for (let i = 1; i < ids.length; i++) expect(msOf(ids[i]!)).toBeGreaterThanOrEqual(msOf(ids[i - 1]!));
    expect(msOf(ids[0]!)).toBeGreaterThanOrEqual(before);
    expect(msOf(ids.at(-1)!)).toBeLessThanOrEqual(after);
  });
});
