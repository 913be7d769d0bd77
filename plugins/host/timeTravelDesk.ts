/**
 * Time travel and verify for the web UI: the system at a seq, and the same verify `homed replay
 * --verify` runs (see actors/replay/timeTravel.ts). Each walks the log on the daemon's thread,
 * so one runs at a time and at most one more waits: a request beyond that is refused at once
 * with TimeTravelBusy, and one whose signal is aborted (its page went away) stops, or leaves
 * the queue, without running on.
 */
import { HologramError } from '../../events/index.ts';
import { type BackgroundWork, type Replayer, type Settings, type SqliteEventStore, type StateAt, TimeTravel } from '../../actors/index.ts';

/** How a request shares the daemon's thread: its abort signal, and the pause taken before each read. */
export type { BackgroundWork } from '../../actors/index.ts';
export type VerifyResult = Awaited<ReturnType<TimeTravel['verify']>>;
export type JournalCheck = VerifyResult['journals'][number];

/** Refused: a time travel or verify runs and another waits. */
export class TimeTravelBusy extends HologramError {
  readonly code = 'TIME_TRAVEL_BUSY';
  constructor() {
    super('time travel is busy: one request is running and one is waiting; try again when they are done');
  }
}

type Waiting = Readonly<{ start: () => void }>;

/** One piece of work at a time, at most one more waiting; a third is refused with TimeTravelBusy. */
export class OneRunningOneWaiting {
  private running = false;
  private waiting: Waiting | undefined;

  run<T>(work: () => Promise<T>, signal?: AbortSignal): Promise<T> {
    if (signal?.aborted) return Promise.reject(signal.reason);
    if (!this.running) return this.start(work);
    if (this.waiting) return Promise.reject(new TimeTravelBusy());
    return new Promise<T>((resolve, reject) => {
      const leave = () => {
        if (this.waiting === waiting) this.waiting = undefined;
        reject(signal!.reason);
      };
      const waiting: Waiting = {
        start: () => {
          signal?.removeEventListener('abort', leave);
          this.start(work).then(resolve, reject);
        },
      };
      signal?.addEventListener('abort', leave, { once: true });
      this.waiting = waiting;
    });
  }

  private async start<T>(work: () => Promise<T>): Promise<T> {
    this.running = true;
    try {
      return await work();
    } finally {
      this.running = false;
      const next = this.waiting;
      this.waiting = undefined;
      next?.start();
    }
  }
}

export class TimeTravelDesk {
  private readonly travel: TimeTravel;
  private readonly slots = new OneRunningOneWaiting();

  constructor(
    store: SqliteEventStore,
    settings: Settings,
    /** What verify re-delivers (the composition root gives every actor's: cli/replayers.ts). */
    replayers: readonly Replayer[],
  ) {
    this.travel = new TimeTravel(store, settings, replayers);
  }

  /** @throws TimeTravelBusy when one runs and another waits. */
  at(seq: number, work: BackgroundWork = {}): Promise<StateAt> {
    return this.slots.run(() => this.travel.at(seq, work), work.signal);
  }

  /** @throws TimeTravelBusy when one runs and another waits. */
  verify(work: BackgroundWork = {}): Promise<VerifyResult> {
    return this.slots.run(() => this.travel.verify(work), work.signal);
  }

  close(): void {
    this.travel.close();
  }
}
