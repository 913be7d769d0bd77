/**
 * Tail-with-catch-up shared by every store: reads from the checkpoint in batches straight
 * from the log (never from a buffer), so a subscriber that falls behind catches up and
 * never misses an event. New appends only wake it.
 */
import type { HologramEvent } from './catalog/index.ts';
import type { AnyEvent, RecordedEventOf } from './envelope.ts';
import type { SubscribeOptions, Subscription } from './eventStore.ts';

export type TailSource<E extends AnyEvent = HologramEvent> = Readonly<{
  read(afterSeq: number, maxCount: number): Promise<readonly RecordedEventOf<E>[]>;
  /** Resolves at the next append (or after a poll interval, for appends by other processes). */
  waitForAppend(): Promise<void>;
}>;

export const startTailSubscription = <E extends AnyEvent>(source: TailSource<E>, options: SubscribeOptions<E>): Subscription => {
  const batchSize = options.batchSize ?? 500;
  let position = options.afterSeq;
  let stopped = false;
  let failed: unknown;
  let wakeOnStop!: () => void;
  const stopRequested = new Promise<void>((resolve) => (wakeOnStop = resolve));
  // `seq: Infinity` waits for the next moment the subscriber has read everything in the log.
  const waiters: { seq: number; resolve: () => void; reject: (e: unknown) => void }[] = [];

  const settleWaiters = () => {
    for (let i = waiters.length - 1; i >= 0; i--) {
      const waiter = waiters[i]!;
      if (failed !== undefined) waiter.reject(failed);
      else if (position >= waiter.seq || waiter.seq === Infinity) waiter.resolve();
      else continue;
      waiters.splice(i, 1);
    }
  };

  const loop = (async () => {
    while (!stopped) {
      let batch: readonly RecordedEventOf<E>[];
      try {
        batch = await source.read(position, batchSize);
        if (batch.length > 0) {
          await options.handler(batch);
          position = batch[batch.length - 1]!.seq;
        }
      } catch (error) {
        failed = error;
        options.onError?.(error);
        settleWaiters();
        return;
      }
      if (batch.length < batchSize) {
        settleWaiters();
        if (stopped) break;
        await Promise.race([source.waitForAppend(), stopRequested]);
      }
    }
    settleWaiters();
    for (const waiter of waiters.splice(0)) {
      waiter.reject(new Error(`the subscription stopped at seq ${position} before reaching seq ${waiter.seq}`));
    }
  })();

  return {
    get position() {
      return position;
    },
    caughtUp(seq = Infinity) {
      if (failed !== undefined) return Promise.reject(failed);
      if (position >= seq) return Promise.resolve();
      return new Promise((resolve, reject) => waiters.push({ seq, resolve, reject }));
    },
    async stop() {
      stopped = true;
      wakeOnStop();
      await loop.catch(() => undefined);
    },
  };
};
