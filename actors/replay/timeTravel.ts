/**
 * The system as it stood at a seq of the log, for the web UI's time travel: every projection
 * rebuilt up to that seq (in memory; the live read models are not touched), and the deciding
 * actors replayed from their journals up to it (the kernel's boot then, the scheduler, the
 * turns open then), each with the state its machine was in. One rebuild is kept and moved
 * forward while the seq asked for grows; going back starts it again from the first event.
 */
import { SCHEDULER_STREAM, type EventStore } from '../../events/index.ts';
import { schedulerMachine } from '../../machines/scheduler/index.ts';
import { allProjections } from '../../projections/index.ts';
import type { SqliteEventStore } from '../../adapters/sqlite/sqliteEventStore.ts';
import { type ReplayDivergence, replayJournal } from '../journal/replayJournal.ts';
import { kernelBoots, replayKernelBoot } from '../kernel/replayKernel.ts';
import type { Settings } from '../modules/config.ts';
import { schedulerConfigFrom } from '../modules/schedulerModule.ts';
import { replayTurn } from '../turn/replayTurn.ts';
import { ToolsetLedger } from '../turn/toolsets.ts';
import { type Rebuild, startRebuild } from './rebuildProjections.ts';

export type ActorAt = Readonly<{ actor: string; machine: string; state: unknown; messages: number; diverged: boolean }>;

export type StateAt = Readonly<{
  seq: number;
  head: number;
  event: unknown;
  actors: readonly ActorAt[];
  projections: Readonly<Record<string, unknown>>;
}>;

/**
 * A difference at or before `seq`. One past it is the cut, not a bug: a message's facts are
 * appended with it, so a seq inside that append has the message and not yet all its facts.
 */
const divergedBy = (divergence: ReplayDivergence | null, seq: number): boolean => divergence !== null && divergence.seq <= seq;

/** Turns most shown at one seq (the open ones, newest first). */
const MAX_TURNS = 20;

export class TimeTravel {
  private rebuild: { at: number; rebuild: Rebuild } | undefined;

  constructor(
    private readonly store: SqliteEventStore,
    private readonly settings: Settings,
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

  private async actorsAt(store: EventStore, seq: number): Promise<ActorAt[]> {
    const actors: ActorAt[] = [];
    const kernel = kernelBoots((await store.readStream('kernel')).filter((e) => e.seq <= seq)).at(-1);
    if (kernel) {
      const boot = replayKernelBoot(kernel);
      actors.push({
        actor: boot.journal,
        machine: 'kernel',
        state: boot.state ?? null,
        messages: boot.messages,
        diverged: divergedBy(boot.divergence, seq),
      });
    }
    const scheduler = await replayJournal({
      store,
      stream: SCHEDULER_STREAM,
      logic: schedulerMachine,
      input: { config: schedulerConfigFrom(this.settings) },
      untilSeq: seq,
    });
    if (scheduler.messages.length > 0) {
      actors.push({
        actor: SCHEDULER_STREAM,
        machine: 'scheduler',
        state: scheduler.snapshot.value,
        messages: scheduler.messages.length,
        diverged: divergedBy(scheduler.divergence, seq),
      });
    }
    const started = (await store.readAll({ types: ['TurnRequested'], toSeq: seq })).map((e) => e.stream);
    const ended = new Set((await store.readAll({ types: ['TurnCompleted'], toSeq: seq })).map((e) => e.stream));
    const open = started.filter((stream) => !ended.has(stream));
    const shown = [...open, ...started.filter((s) => ended.has(s)).slice(-3)].slice(-MAX_TURNS);
    const toolsets = new ToolsetLedger(store);
    for (const stream of shown) {
      const turn = await replayTurn(store, stream, toolsets, seq);
      actors.push({
        actor: stream,
        machine: 'turn',
        state: turn.state ?? null,
        messages: turn.messages,
        diverged: divergedBy(turn.divergence, seq),
      });
    }
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
      actors: await this.actorsAt(this.store, target),
      projections: await this.projectionsAt(target),
    };
  }

  close(): void {
    this.rebuild?.rebuild.close();
    this.rebuild = undefined;
  }
}
