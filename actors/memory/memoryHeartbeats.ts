/**
 * The four heartbeat loops and the rule distiller, each a heartbeat machine on virtual time.
 * `tick(at)` hands every loop the time; a loop that fires is recorded (`HeartbeatFired`) and
 * its work runs: distill prunes every scope, archive distils idle cold docs, merge proposes
 * entity merges (a model decides them when one is configured, else they are proposals), rules
 * extracts personal facts, review has a model re-read uncertain relations (without a model it
 * is only recorded).
 */
import { createActor, type Actor } from 'xstate';
import { MEMORY_STREAM, type EventStore } from '../../events/index.ts';
import {
  DEFAULT_HEARTBEAT_INTERVALS_MS,
  heartbeatMachine,
  type HeartbeatFact,
  type HeartbeatLoop,
} from '../../machines/memory/heartbeatMachine.ts';
import type { MemoryService } from './memoryService.ts';
import type { MergeJudge, RelationJudge } from './mergeJudge.ts';

const LOOPS: readonly HeartbeatLoop[] = ['rules', 'distill', 'archive', 'merge', 'review'];

/** One loop's heartbeat machine, driven by clock times (live, and in replay). */
export class HeartbeatLoopActor {
  private readonly actor: Actor<typeof heartbeatMachine>;
  private readonly fired: HeartbeatFact['data'][] = [];

  /** `intervals` as configured (the spec's defaults for loops it leaves out); `lastFiredAt` resumes the loop after a restart. */
  constructor(loop: HeartbeatLoop, intervals: Partial<Record<HeartbeatLoop, number>>, startAt: number, lastFiredAt?: number) {
    const input = {
      loop,
      intervalMs: intervals[loop] ?? DEFAULT_HEARTBEAT_INTERVALS_MS[loop],
      startAt,
      ...(lastFiredAt !== undefined ? { lastFiredAt } : {}),
    };
    this.actor = createActor(heartbeatMachine, { input });
    this.actor.on('HeartbeatFired', (fact) => this.fired.push(fact.data));
    this.actor.start();
  }

  /** The firing the loop decides at `at`, if it is due. */
  clock(at: number): HeartbeatFact['data'] | undefined {
    this.fired.length = 0;
    this.actor.send({ type: 'CLOCK', at });
    return this.fired[0];
  }

  stop(): void {
    this.actor.stop();
  }
}

export class MemoryHeartbeats {
  private readonly loops: HeartbeatLoopActor[];

  constructor(
    private readonly memory: MemoryService,
    private readonly store: EventStore,
    startAt: number,
    intervals: Partial<Record<HeartbeatLoop, number>> = {},
    private readonly judge?: MergeJudge,
    private readonly reviewer?: RelationJudge,
    /** Each loop's last recorded firing (before a restart): the loop resumes from it. */
    lastFired: Partial<Record<HeartbeatLoop, number>> = {},
  ) {
    this.loops = LOOPS.map((loop) => new HeartbeatLoopActor(loop, intervals, startAt, lastFired[loop]));
  }

  async tick(at: number): Promise<readonly HeartbeatLoop[]> {
    const fired = this.loops.flatMap((loop) => loop.clock(at) ?? []);
    for (const { loop, since } of fired) {
      await this.store.append(MEMORY_STREAM, [{ type: 'HeartbeatFired', data: { loop, at, since }, at }]);
      await runHeartbeatWork(this.memory, loop, since, at, this.judge, this.reviewer);
    }
    return fired.map((f) => f.loop);
  }

  stop(): void {
    for (const loop of this.loops) loop.stop();
  }
}

/** Each loop's latest recorded firing: where its heartbeat resumes after a restart. */
export const lastFiringsIn = async (store: EventStore): Promise<Partial<Record<HeartbeatLoop, number>>> => {
  const last: Partial<Record<HeartbeatLoop, number>> = {};
  for (const event of await store.readAll({ types: ['HeartbeatFired'], stream: MEMORY_STREAM })) {
    const { loop, at } = event.data as { loop: HeartbeatLoop; at: number };
    last[loop] = Math.max(last[loop] ?? at, at);
  }
  return last;
};

/** What a loop does when it fires; the same work runs live and in replay. */
export const runHeartbeatWork = async (
  memory: MemoryService,
  loop: HeartbeatLoop,
  since: number,
  at: number,
  judge?: MergeJudge,
  reviewer?: RelationJudge,
): Promise<void> => {
  switch (loop) {
    case 'distill':
      await memory.pruneAll(at);
      return;
    case 'archive':
      await memory.archive(at);
      return;
    case 'merge':
      await memory.proposeEntityMerges(at, judge);
      return;
    case 'rules':
      await memory.distillRules(since, at);
      return;
    case 'review':
      if (reviewer) await memory.reviewRelations(at, reviewer);
      return;
  }
};
