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
import { DEFAULT_HEARTBEAT_INTERVALS_MS, heartbeatMachine, type HeartbeatFact, type HeartbeatLoop } from '../../machines/memory/heartbeatMachine.ts';
import type { MemoryService } from './memoryService.ts';
import type { MergeJudge, RelationJudge } from './mergeJudge.ts';

const LOOPS: readonly HeartbeatLoop[] = ['rules', 'distill', 'archive', 'merge', 'review'];

export class MemoryHeartbeats {
  private readonly actors: Actor<typeof heartbeatMachine>[];
  private fired: HeartbeatFact[] = [];
  private lastScopeInput = new Map<string, { query: string }>();

  constructor(
    private readonly memory: MemoryService,
    private readonly store: EventStore,
    startAt: number,
    intervals: Partial<Record<HeartbeatLoop, number>> = {},
    private readonly judge?: MergeJudge,
    private readonly reviewer?: RelationJudge,
  ) {
    this.actors = LOOPS.map((loop) => {
      const actor = createActor(heartbeatMachine, { input: { loop, intervalMs: intervals[loop] ?? DEFAULT_HEARTBEAT_INTERVALS_MS[loop], startAt } });
      actor.on('HeartbeatFired', (fact) => this.fired.push(fact));
      actor.start();
      return actor;
    });
  }

  /** The latest input of a scope: what the distill loop prunes against. */
  noteInput(scope: string, query: string): void {
    this.lastScopeInput.set(scope, { query });
  }

  async tick(at: number): Promise<readonly HeartbeatLoop[]> {
    this.fired = [];
    for (const actor of this.actors) actor.send({ type: 'CLOCK', at });
    const fired = this.fired;
    for (const fact of fired) {
      await this.store.append(MEMORY_STREAM, [{ type: 'HeartbeatFired', data: { loop: fact.data.loop, at }, at }]);
      await this.run(fact.data.loop, fact.data.since ?? at - DEFAULT_HEARTBEAT_INTERVALS_MS[fact.data.loop], at);
    }
    return fired.map((f) => f.data.loop);
  }

  stop(): void {
    for (const actor of this.actors) actor.stop();
  }

  private async run(loop: HeartbeatLoop, since: number, at: number): Promise<void> {
    switch (loop) {
      case 'distill':
        for (const [scope, { query }] of this.lastScopeInput) await this.memory.prune(scope, query, at);
        return;
      case 'archive':
        await this.memory.archive(at);
        return;
      case 'merge':
        await this.memory.proposeEntityMerges(at, this.judge);
        return;
      case 'rules':
        await this.memory.distillRules(since, at);
        return;
      case 'review':
        if (this.reviewer) await this.memory.reviewRelations(at, this.reviewer);
        return;
    }
  }
}
