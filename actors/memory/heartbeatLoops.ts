/**
 * The memory's heartbeat loops (rules, distill, archive, merge, review), each a heartbeat machine
 * on the times it is given. The memory asks which loops are due, then fires each as a message of
 * its own; after a restart each loop resumes from its last recorded firing.
 */
import { createActor, type Actor, type InspectionEvent } from 'xstate';
import { DEFAULT_HEARTBEAT_INTERVALS_MS, heartbeatMachine, type HeartbeatFact, type HeartbeatLoop } from '../../machines/memory/index.ts';

export const HEARTBEAT_LOOPS: readonly HeartbeatLoop[] = ['rules', 'distill', 'archive', 'merge', 'review'];

type Loop = { actor: Actor<typeof heartbeatMachine>; fired: HeartbeatFact['data'][] };

export class HeartbeatLoops {
  private loops = new Map<HeartbeatLoop, Loop>();

  constructor(
    private intervals: Partial<Record<HeartbeatLoop, number>>,
    private readonly inspect?: (event: InspectionEvent) => void,
  ) {}

  /** Starts every loop at `startAt`, or from its last firing when it fired before; `intervals` replace the ones given before. */
  restart(startAt: number, lastFired: Readonly<Record<string, number>>, intervals = this.intervals): void {
    this.intervals = intervals;
    for (const { actor } of this.loops.values()) actor.stop();
    this.loops = new Map(
      HEARTBEAT_LOOPS.map((loop) => {
        const lastFiredAt = lastFired[loop];
        const input = {
          loop,
          intervalMs: this.intervals[loop] ?? DEFAULT_HEARTBEAT_INTERVALS_MS[loop],
          startAt,
          ...(lastFiredAt !== undefined ? { lastFiredAt } : {}),
        };
        const actor = createActor(heartbeatMachine, { id: `heartbeat-${loop}`, input, ...(this.inspect ? { inspect: this.inspect } : {}) });
        const entry: Loop = { actor, fired: [] };
        entry.actor.on('HeartbeatFired', (fact) => entry.fired.push(fact.data));
        entry.actor.start();
        return [loop, entry];
      }),
    );
  }

  /**
   * The loops a clock reading `at` concerns, in their fixed order (none before the memory
   * started): those due, and those it is behind (the clock went back; they start over from it).
   */
  dueAt(at: number): HeartbeatLoop[] {
    return HEARTBEAT_LOOPS.filter((loop) => {
      const context = this.loops.get(loop)?.actor.getSnapshot().context;
      return context !== undefined && (at >= context.dueAt || at < context.since);
    });
  }

  /** The earliest time a loop is due, or null before the memory started. */
  nextDueAt(): number | null {
    const due = [...this.loops.values()].map(({ actor }) => actor.getSnapshot().context.dueAt);
    return due.length > 0 ? Math.min(...due) : null;
  }

  /** The loop's firing at `at`, if it is due then (a clock behind the loop starts it over instead). */
  fire(loop: HeartbeatLoop, at: number): HeartbeatFact['data'] | undefined {
    const entry = this.loops.get(loop);
    if (!entry) return undefined;
    entry.fired.length = 0;
    entry.actor.send({ type: 'CLOCK', at });
    return entry.fired[0];
  }

  /** Each loop's machine state value (none before the memory started). */
  states(): { loop: HeartbeatLoop; state: unknown }[] {
    return [...this.loops].map(([loop, { actor }]) => ({ loop, state: actor.getSnapshot().value }));
  }

  stop(): void {
    for (const { actor } of this.loops.values()) actor.stop();
  }
}
