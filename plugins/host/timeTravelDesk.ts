/**
 * Time travel and verify for the web UI: the system at a seq (see actors/replay/timeTravel.ts),
 * and the same verify `homed replay --verify` runs (every projection rebuilt and compared, every
 * actor's journal re-delivered to fresh machines), with each first divergence's recorded and
 * re-decided event. One request at a time: each walks the log.
 */
import {
  allProjections,
  type ProjectionVerdict,
  type Replayer,
  type ReplayDivergence,
  type Settings,
  type SqliteEventStore,
  type StateAt,
  TimeTravel,
  verifyProjections,
} from '../../actors/index.ts';

export type JournalCheck = Readonly<{ actors: string; journal: string; divergence: ReplayDivergence | null }>;
export type VerifyResult = Readonly<{
  projections: readonly ProjectionVerdict[];
  journals: readonly JournalCheck[];
  notes: readonly string[];
  /** The first divergence found, projections first. */
  first: string | null;
}>;

export class TimeTravelDesk {
  private readonly travel: TimeTravel;
  private queue: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly store: SqliteEventStore,
    private readonly settings: Settings,
    /** What verify re-delivers (the composition root gives every actor's: cli/replayers.ts). */
    private readonly replayers: readonly Replayer[],
  ) {
    this.travel = new TimeTravel(store, settings, replayers);
  }

  private serial<T>(work: () => Promise<T>): Promise<T> {
    const next = this.queue.then(work, work);
    this.queue = next.catch(() => undefined);
    return next;
  }

  at(seq: number): Promise<StateAt> {
    return this.serial(() => this.travel.at(seq));
  }

  verify(): Promise<VerifyResult> {
    return this.serial(async () => {
      const projections = await verifyProjections(this.store, this.store.db, allProjections());
      const journals: JournalCheck[] = [];
      const notes: string[] = [];
      for (const replayer of this.replayers) {
        const report = await replayer.replay(this.store, this.settings);
        for (const verdict of report.verdicts) journals.push({ actors: report.name, ...verdict });
        for (const note of report.notes ?? []) notes.push(`${report.name}: ${note}`);
      }
      const diverged = projections.find((v) => v.status === 'diverged');
      const journal = journals.find((j) => j.divergence);
      return { projections, journals, notes, first: diverged?.projection ?? journal?.journal ?? null };
    });
  }

  close(): void {
    this.travel.close();
  }
}
