/**
 * The EventStore contract: every dialect runs this suite (SQLite, in-memory, later
 * PostgreSQL). Given/when/then in the emmett style.
 */
import { describe, expect, it } from 'vitest';
import {
  DuplicateEventId,
  ExpectedVersionConflict,
  InvalidEventPayload,
  isExpectedVersionConflict,
  UnknownEventType,
  type EventStore,
  type RecordedEvent,
  type AnyEvent,
} from '../../events/index.ts';
import { noted } from '../support/testCatalog.ts';

export type StoreFactory = () => Promise<{ store: EventStore<AnyEvent>; cleanup?: () => Promise<void> | void }>;

const seqs = (events: readonly RecordedEvent[]) => events.map((e) => e.seq);

export const describeEventStoreContract = (dialect: string, factory: StoreFactory): void => {
  describe(`EventStore contract: ${dialect}`, () => {
    const withStore = (body: (store: EventStore<AnyEvent>) => Promise<void>) => async () => {
      const { store, cleanup } = await factory();
      try {
        await body(store);
      } finally {
        await store.close();
        await cleanup?.();
      }
    };

    it(
      'gives a new stream versions from 1 and the log a gapless global sequence',
      withStore(async (store) => {
        const first = await store.append('a', [noted(1), noted(2)]);
        const second = await store.append('b', [noted(3)]);
        const third = await store.append('a', [noted(4)]);
        expect(first.nextVersion).toBe(2);
        expect(third.nextVersion).toBe(3);
        expect(seqs(first.events)).toEqual([1, 2]);
        expect(seqs(second.events)).toEqual([3]);
        expect(third.lastSeq).toBe(4);
        expect((await store.readStream('a')).map((e) => e.version)).toEqual([1, 2, 3]);
        expect(seqs(await store.readAll())).toEqual([1, 2, 3, 4]);
        expect(await store.headSeq()).toBe(4);
        expect(await store.streamVersion('a')).toBe(3);
        expect(await store.streamVersion('missing')).toBe(0);
      }),
    );

    it(
      'keeps every envelope field',
      withStore(async (store) => {
        await store.append('s', [
          { type: 'TestNoted', data: { n: 7, text: 'héllo 你好' }, id: 'e-1', at: 1234, causation: 'c-1', correlation: 'r-1' },
        ]);
        const [event] = await store.readAll();
        expect(event).toEqual({
          seq: 1,
          stream: 's',
          version: 1,
          id: 'e-1',
          type: 'TestNoted',
          schemaVersion: 1,
          at: 1234,
          causation: 'c-1',
          correlation: 'r-1',
          data: { n: 7, text: 'héllo 你好' },
        });
      }),
    );

    it(
      'checks the expected version sentinels',
      withStore(async (store) => {
        await store.append('s', [noted(1)], { expectedVersion: 'no_stream' });
        await expect(store.append('s', [noted(2)], { expectedVersion: 'no_stream' })).rejects.toThrow(ExpectedVersionConflict);
        await expect(store.append('t', [noted(2)], { expectedVersion: 'stream_exists' })).rejects.toThrow(ExpectedVersionConflict);
        await store.append('s', [noted(3)], { expectedVersion: 'stream_exists' });
        await store.append('s', [noted(4)], { expectedVersion: 2 });
        await store.append('s', [noted(5)], { expectedVersion: 'any' });
        const stale = await store.append('s', [noted(6)], { expectedVersion: 2 }).catch((e: unknown) => e);
        expect(isExpectedVersionConflict(stale)).toBe(true);
        expect(stale).toMatchObject({ stream: 's', expected: 2, actual: 4, code: 'EXPECTED_VERSION_CONFLICT' });
        expect((await store.readStream('s')).map((e) => (e.data as { n: number }).n)).toEqual([1, 3, 4, 5]);
        expect(await store.streamVersion('t')).toBe(0);
      }),
    );

    it(
      'treats a re-append of the same event ids as a no-op, even with a stale expected version',
      withStore(async (store) => {
        const original = await store.append('s', [noted(1, 'x-1'), noted(2, 'x-2')], { expectedVersion: 'no_stream' });
        await store.append('s', [noted(3, 'x-3')]);
        const retry = await store.append('s', [noted(1, 'x-1'), noted(2, 'x-2')], { expectedVersion: 'no_stream' });
        expect(retry.alreadyStored).toBe(true);
        expect(seqs(retry.events)).toEqual(seqs(original.events));
        expect(await store.headSeq()).toBe(3);
      }),
    );

    it(
      'refuses a "retry" whose payload differs: the id names another event',
      withStore(async (store) => {
        await store.append('s', [noted(1, 'x-1')]);
        await expect(store.append('s', [noted(2, 'x-1')])).rejects.toThrow(DuplicateEventId);
        expect((await store.readAll()).map((e) => e.data)).toEqual([{ n: 1 }]);
      }),
    );

    it(
      'refuses an id reused for another event, and appends nothing of that batch',
      withStore(async (store) => {
        await store.append('s', [noted(1, 'x-1')]);
        await expect(store.append('s', [noted(2, 'x-2'), noted(1, 'x-1')])).rejects.toThrow(DuplicateEventId);
        await expect(store.append('other', [noted(1, 'x-1')])).rejects.toThrow(DuplicateEventId);
        await expect(store.append('s', [noted(5, 'y'), noted(6, 'y')])).rejects.toThrow(DuplicateEventId);
        expect(await store.headSeq()).toBe(1);
      }),
    );

    it(
      'refuses a payload that does not match its type, naming the type and the field, atomically',
      withStore(async (store) => {
        const error = await store.append('s', [noted(1), { type: 'TestNoted', data: { n: 'two' } }]).catch((e: unknown) => e);
        expect(error).toBeInstanceOf(InvalidEventPayload);
        expect((error as Error).message).toContain("'TestNoted'");
        expect((error as Error).message).toContain("'n'");
        await expect(store.append('s', [{ type: 'TestNoted', data: { n: 1, extra: true } }])).rejects.toThrow(/extra/);
        await expect(store.append('s', [{ type: 'NoSuchThing', data: {} }])).rejects.toThrow(UnknownEventType);
        expect(await store.headSeq()).toBe(0);
      }),
    );

    it(
      'reads streams and the log with ranges and filters',
      withStore(async (store) => {
        await store.append('a', [noted(1), noted(2), noted(3)]);
        await store.append('b', [{ type: 'TestRenamed', data: { fullName: 'x' } }, noted(4)]);
        expect((await store.readStream('a', { fromVersion: 2, maxCount: 1 })).map((e) => e.version)).toEqual([2]);
        expect(seqs(await store.readAll({ fromSeq: 2, toSeq: 4 }))).toEqual([2, 3, 4]);
        expect(seqs(await store.readAll({ types: ['TestRenamed'] }))).toEqual([4]);
        expect(seqs(await store.readAll({ stream: 'b' }))).toEqual([4, 5]);
        expect(seqs(await store.readAll({ fromSeq: 3, maxCount: 2 }))).toEqual([3, 4]);
      }),
    );

    it(
      'lets exactly one of two racing appends with the same expected version win',
      withStore(async (store) => {
        await store.append('s', [noted(0)]);
        const results = await Promise.allSettled([
          store.append('s', [noted(1)], { expectedVersion: 1 }),
          store.append('s', [noted(2)], { expectedVersion: 1 }),
          store.append('t', [noted(3)], { expectedVersion: 'no_stream' }),
        ]);
        expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
        expect(seqs(await store.readAll())).toEqual([1, 2, 3]);
      }),
    );

    it(
      'keeps the global sequence gapless under many concurrent appends',
      withStore(async (store) => {
        await Promise.all(Array.from({ length: 60 }, (_, i) => store.append(`s-${i % 7}`, [noted(i), noted(i)])));
        const all = await store.readAll();
        expect(seqs(all)).toEqual(Array.from({ length: 120 }, (_, i) => i + 1));
        for (let s = 0; s < 7; s++) {
          const versions = all.filter((e) => e.stream === `s-${s}`).map((e) => e.version);
          expect(versions).toEqual(versions.map((_, i) => i + 1));
        }
      }),
    );

    it(
      'tails from a checkpoint: catches up, then follows, and a slow subscriber misses nothing',
      withStore(async (store) => {
        for (let i = 1; i <= 5; i++) await store.append('s', [noted(i)]);
        const seen: number[] = [];
        const subscription = store.subscribe({
          afterSeq: 2,
          batchSize: 2,
          handler: async (events) => {
            await new Promise((resolve) => setImmediate(resolve));
            seen.push(...seqs(events));
          },
        });
        await subscription.caughtUp(5);
        for (let i = 6; i <= 20; i++) void store.append('s', [noted(i)]);
        await subscription.caughtUp(20);
        await subscription.stop();
        expect(seen).toEqual(Array.from({ length: 18 }, (_, i) => i + 3));
        expect(subscription.position).toBe(20);
      }),
    );

    it(
      'stops a subscription whose handler throws, at the failing batch',
      withStore(async (store) => {
        await store.append('s', [noted(1), noted(2), noted(3)]);
        const errors: unknown[] = [];
        const subscription = store.subscribe({
          afterSeq: 0,
          batchSize: 1,
          handler: (events) => {
            if (events[0]!.seq === 2) throw new Error('fold failed');
          },
          onError: (error) => errors.push(error),
        });
        await expect(subscription.caughtUp(3)).rejects.toThrow('fold failed');
        expect(subscription.position).toBe(1);
        expect(errors).toHaveLength(1);
      }),
    );
  });
};
