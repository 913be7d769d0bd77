/**
 * The system as it stood at a seq of the log, and verify, for the web UI: every projection
 * rebuilt up to that seq (in memory; the live read models are not touched), and every actor
 * replayed from its journal up to it by the same replayers verify runs (the kernel's boot then,
 * the scheduler, the plugin supervisors, the memory and its heartbeat loops, the turns open
 * then), each with the state its machine was in. One rebuild is kept and moved forward while
 * the seq asked for grows; going back starts it again from the first event.
 *
 * Both run in the daemon beside the live actors, so they read the log as background work (see
 * `BackgroundWork`): each read first gives the event loop a turn and stops the work once its
 * signal is aborted, and sees the log only up to the head it started at, so what they report is
 * what running them in one go at that moment would have reported, byte for byte.
 */
import { openDatabase, type SqliteDatabase } from '../../adapters/sqlite/openDatabase.ts';
import type { SqliteEventStore } from '../../adapters/sqlite/sqliteEventStore.ts';
import type {
  AppendResult,
  EventStore,
  HologramEvent,
  ReadAllOptions,
  ReadStreamOptions,
  RecordedEvent,
  RecordedEventOf,
  Subscription,
} from '../../events/index.ts';
import { allProjections } from '../../projections/index.ts';
import type { ReplayDivergence } from '../journal/replayJournal.ts';
import type { Settings } from '../modules/config.ts';
import { type Rebuild, startRebuild } from './rebuildProjections.ts';
import { type ActorAt, type BackgroundWork, type Replayer, takeTurn } from './replayer.ts';
import { type ProjectionVerdict, verifyProjections } from './verifyProjections.ts';

export type { BackgroundWork } from './replayer.ts';

export type StateAt = Readonly<{
  seq: number;
  head: number;
  event: RecordedEvent | null;
  actors: readonly ActorAt[];
  projections: Readonly<Record<string, unknown>>;
}>;

export type JournalCheck = Readonly<{ actors: string; journal: string; divergence: ReplayDivergence | null }>;

export type VerifyReport = Readonly<{
  projections: readonly ProjectionVerdict[];
  journals: readonly JournalCheck[];
  notes: readonly string[];
  /** The first divergence found, projections first. */
  first: string | null;
}>;

/**
 * `store` as background work reads it: every read awaits `work.pause` and then stops if
 * `work.signal` was aborted, and sees only the events up to `upTo` (appends made while the work
 * runs are left out). It only reads: the replayers and the rebuild never write to the log.
 */
export class BackgroundReads implements EventStore {
  constructor(
    private readonly store: EventStore,
    private readonly upTo: number,
    private readonly work: BackgroundWork = {},
  ) {}

  async readStream(stream: string, options?: ReadStreamOptions): Promise<readonly RecordedEventOf<HologramEvent>[]> {
    await takeTurn(this.work);
    // A stream's later versions have later seqs: what the cut leaves is a prefix of what was read.
    return (await this.store.readStream(stream, options)).filter((event) => event.seq <= this.upTo);
  }

  async readAll<T extends HologramEvent['type'] = HologramEvent['type']>(
    options: ReadAllOptions<T> = {},
  ): Promise<readonly RecordedEventOf<Extract<HologramEvent, { type: T }>>[]> {
    await takeTurn(this.work);
    return this.store.readAll({ ...options, toSeq: Math.min(options.toSeq ?? this.upTo, this.upTo) });
  }

  async headSeq(): Promise<number> {
    await takeTurn(this.work);
    return this.upTo;
  }

  async streamVersion(stream: string): Promise<number> {
    return (await this.readStream(stream)).length;
  }

  append(): Promise<AppendResult> {
    return Promise.reject(new Error('time travel and verify only read the log; nothing they run may append to it'));
  }

  subscribe(): Subscription {
    throw new Error('time travel and verify read the log up to a seq; they never follow it');
  }

  async close(): Promise<void> {}
}

/**
 * The live read models held still while verify compares them: a read transaction on a second,
 * read-only connection, so the daemon's appends meanwhile neither block nor move what it sees.
 * An in-memory log has no second connection; its read models are compared as they are.
 */
const holdReadModels = (live: SqliteDatabase): { db: SqliteDatabase; release(): void } => {
  if (live.memory) return { db: live, release: () => undefined };
  const held = openDatabase(live.name, { readonly: true });
  held.exec('BEGIN');
  // The first read inside the transaction fixes what it sees.
  held.prepare('SELECT count(*) FROM sqlite_master').get();
  return { db: held, release: () => held.close() };
};

export class TimeTravel {
  private rebuild: Rebuild | undefined;

  constructor(
    private readonly store: SqliteEventStore,
    private readonly settings: Settings,
    /** Every actor's replayer (the composition root's list: cli/replayers.ts). */
    private readonly replayers: readonly Replayer[],
  ) {}

  /** The log as background work reads it, up to its head now. */
  private async logNow(work: BackgroundWork): Promise<BackgroundReads> {
    return new BackgroundReads(this.store, await this.store.headSeq(), work);
  }

  private async projectionsAt(log: EventStore, seq: number): Promise<Record<string, unknown>> {
    const projections = allProjections();
    // A rebuild stopped part way (its page went away) is kept where its last whole batch left it.
    if (!this.rebuild || this.rebuild.runner.position() > seq) {
      this.rebuild?.close();
      this.rebuild = startRebuild(this.store, projections);
    }
    await this.rebuild.advanceTo(seq, log);
    const { runner } = this.rebuild;
    return Object.fromEntries(projections.map((p) => [p.name, runner.dump(p.name)]));
  }

  private async actorsAt(log: EventStore, seq: number, work: BackgroundWork): Promise<ActorAt[]> {
    const actors: ActorAt[] = [];
    for (const replayer of this.replayers) actors.push(...(await replayer.replay(log, this.settings, seq, work)).actors);
    return actors;
  }

  async at(seq: number, work: BackgroundWork = {}): Promise<StateAt> {
    const log = await this.logNow(work);
    const head = await log.headSeq();
    const target = Math.max(1, Math.min(seq, head));
    const [event] = await log.readAll({ fromSeq: target, toSeq: target });
    return {
      seq: target,
      head,
      event: event ?? null,
      actors: await this.actorsAt(log, target, work),
      projections: await this.projectionsAt(log, target),
    };
  }

  /**
   * What `homed replay --verify` reports: every projection rebuilt and compared with the live
   * read model, every actor's journal re-delivered to fresh machines.
   */
  async verify(work: BackgroundWork = {}): Promise<VerifyReport> {
    const live = holdReadModels(this.store.db);
    try {
      // Taken after the read models were held: the log reaches at least as far as they do.
      const log = await this.logNow(work);
      const projections = await verifyProjections(log, live.db, allProjections());
      const journals: JournalCheck[] = [];
      const notes: string[] = [];
      for (const replayer of this.replayers) {
        const report = await replayer.replay(log, this.settings, undefined, work);
        for (const verdict of report.verdicts) journals.push({ actors: report.name, ...verdict });
        for (const note of report.notes ?? []) notes.push(`${report.name}: ${note}`);
      }
      const diverged = projections.find((v) => v.status === 'diverged');
      const journal = journals.find((j) => j.divergence);
      return { projections, journals, notes, first: diverged?.projection ?? journal?.journal ?? null };
    } finally {
      live.release();
    }
  }

  close(): void {
    this.rebuild?.close();
    this.rebuild = undefined;
  }
}
