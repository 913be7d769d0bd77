/**
 * The time travel desk's queue: one request runs, one more waits, a third is refused at once
 * with TimeTravelBusy (saying to try again); a waiting request whose page went away leaves the
 * queue without running, and one aborted before it came never starts.
 */
import { describe, expect, it } from 'vitest';
import { OneRunningOneWaiting, TimeTravelBusy } from '../../plugins/host/timeTravelDesk.ts';

/** Work that runs until the test ends it; `started` says whether it began. */
const heldWork = <T>(value: T) => {
  let end!: () => void;
  const ended = new Promise<void>((resolve) => (end = resolve));
  const work = Object.assign(
    async () => {
      work.started = true;
      await ended;
      return value;
    },
    { started: false, end: () => end() },
  );
  return work;
};

describe('the time travel desk', () => {
  it('runs one, queues one, and refuses the next at once, saying it is busy', async () => {
    const slots = new OneRunningOneWaiting();
    const first = heldWork('first');
    const second = heldWork('second');
    const third = heldWork('third');
    const running = slots.run(first);
    const waiting = slots.run(second);
    const refused = slots.run(third);
    await expect(refused).rejects.toBeInstanceOf(TimeTravelBusy);
    await expect(refused).rejects.toThrow('time travel is busy: one request is running and one is waiting; try again when they are done');
    expect([first.started, second.started, third.started]).toEqual([true, false, false]);

    first.end();
    await expect(running).resolves.toBe('first');
    expect(second.started).toBe(true);
    // One runs again: the next one may wait.
    const next = heldWork('next');
    const queued = slots.run(next);
    second.end();
    await expect(waiting).resolves.toBe('second');
    next.end();
    await expect(queued).resolves.toBe('next');
  });

  it('lets a waiting request whose page went away leave without running, and frees its place', async () => {
    const slots = new OneRunningOneWaiting();
    const first = heldWork('first');
    const left = heldWork('left');
    const running = slots.run(first);
    const leaving = new AbortController();
    const waiting = slots.run(left, leaving.signal);
    const gone = new Error('the page went away');
    leaving.abort(gone);
    await expect(waiting).rejects.toBe(gone);
    const after = heldWork('after');
    const queued = slots.run(after);
    first.end();
    await running;
    expect(left.started).toBe(false);
    expect(after.started).toBe(true);
    after.end();
    await expect(queued).resolves.toBe('after');
  });

  it('never starts a request aborted before it came, and a failure frees the place', async () => {
    const slots = new OneRunningOneWaiting();
    const never = heldWork('never');
    const gone = new Error('gone');
    await expect(slots.run(never, AbortSignal.abort(gone))).rejects.toBe(gone);
    expect(never.started).toBe(false);
    await expect(slots.run(() => Promise.reject(new Error('failed')))).rejects.toThrow('failed');
    const later = heldWork('later');
    const running = slots.run(later);
    expect(later.started).toBe(true);
    later.end();
    await expect(running).resolves.toBe('later');
  });
});
