/**
 * The system as it stood at a seq of the log, for the web UI's time travel: every projection
 * rebuilt up to that seq (in memory; the live read models are not touched), and every actor
 * replayed from its journal up to it by the same replayers verify runs (the kernel's boot then,
 * the scheduler, the plugin supervisors, the memory and its heartbeat loops, the turns open
 * then), each with the state its machine was in. One rebuild is kept and moved forward while
 * the seq asked for grows; going back starts it again from the first event.
 */
import type { SqliteEventStore } from '../../adapters/sqlite/sqliteEventStore.ts';
import type { RecordedEvent } from '../../events/index.ts';
import { allProjections } from '../../projections/index.ts';
import type { Settings } from '../modules/config.ts';
import { type Rebuild, startRebuild } from './rebuildProjections.ts';
import type { ActorAt, Replayer } from './replayer.ts';

export type StateAt = Readonly<{
  seq: number;
  head: number;
  event: RecordedEvent | null;
  actors: readonly ActorAt[];
  projections: Readonly<Record<string, unknown>>;
}>;

export class TimeTravel {
  private rebuild: { at: number; rebuild: Rebuild } | undefined;

  constructor(
    private readonly store: SqliteEventStore,
    private readonly settings: Settings,
    /** Every actor's replayer (the composition root's list: cli/replayers.ts). */
    private readonly replayers: readonly Replayer[],
  ) {}

  private async projectionsAt(seq: number): Promise<Record<string, unknown>> {
    const projections = allProjections();
    if (!this.rebuild || this.rebuild.at > seq) {
      this.rebuild?.rebuild.close();
      this.rebuild = { at: 0, rebuild: startRebuild(this.store, projections) };
    }
    this.rebuild.at = await this.rebuild.rebuild.advanceTo(seq);
    const { runner } = this.rebuild.rebuild;
    return Object.fromEntries(projections.map((p) => [p.name, runner.dump(p.name)]));
  }

  private async actorsAt(seq: number): Promise<ActorAt[]> {
    const actors: ActorAt[] = [];
    for (const replayer of this.replayers) actors.push(...(await replayer.replay(this.store, this.settings, seq)).actors);
    return actors;
  }

  async at(seq: number): Promise<StateAt> {
    const head = await this.store.headSeq();
    const target = Math.max(1, Math.min(seq, head));
    const [event] = await this.store.readAll({ fromSeq: target, toSeq: target });
    return {
      seq: target,
      head,
      event: event ?? null,
      actors: await this.actorsAt(target),
      projections: await this.projectionsAt(target),
    };
  }

  close(): void {
    this.rebuild?.rebuild.close();
    this.rebuild = undefined;
  }
}
