/**
 * The memory's heartbeat loops (rules, distill, archive, merge, review), each a heartbeat machine
 * on the times it is given. The memory asks which loops are due, then fires each as a message of
 * its own; after a restart each loop resumes from its last recorded firing.
 */
import { createActor, type Actor, type InspectionEvent } from 'xstate';
import {
  DEFAULT_HEARTBEAT_INTERVALS_MS,
  heartbeatMachine,
  type HeartbeatFact,
  type HeartbeatLoop,
  startsOver,
} from '../../machines/memory/index.ts';

export const HEARTBEAT_LOOPS: readonly HeartbeatLoop[] = ['rules', 'distill', 'archive', 'merge', 'review'];

type Loop = { actor: Actor<typeof heartbeatMachine>; emitted: HeartbeatFact[] };

export class HeartbeatLoops {
  private loops = new Map<HeartbeatLoop, Loop>();

  constructor(
    private intervals: Partial<Record<HeartbeatLoop, number>>,
    private readonly inspect?: (event: InspectionEvent) => void,
  ) {}

  /**
   * Starts every loop at `startAt`, or from where it left off when it ran before; `intervals`
   * replace the ones given before. @returns a start-over for each loop that left off later than
   * `startAt` (the clock went back), to be recorded.
   */
  restart(startAt: number, leftOff: Readonly<Record<string, number>>, intervals = this.intervals): HeartbeatFact[] {
    this.intervals = intervals;
    for (const { actor } of this.loops.values()) actor.stop();
    const startedOver: HeartbeatFact[] = [];
    this.loops = new Map(
      HEARTBEAT_LOOPS.map((loop) => {
        const since = leftOff[loop];
        const input = {
          loop,
          intervalMs: this.intervals[loop] ?? DEFAULT_HEARTBEAT_INTERVALS_MS[loop],
          startAt,
          ...(since !== undefined ? { since } : {}),
        };
        if (since !== undefined && startsOver(input)) {
          startedOver.push({ type: 'HeartbeatStartedOver', data: { loop, at: startAt, leftOffAt: since } });
        }
        const actor = createActor(heartbeatMachine, { id: `heartbeat-${loop}`, input, ...(this.inspect ? { inspect: this.inspect } : {}) });
        const entry: Loop = { actor, emitted: [] };
        entry.actor.on('*', (fact) => entry.emitted.push(fact));
        entry.actor.start();
        return [loop, entry];
      }),
    );
    return startedOver;
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

  /** What the loop decides at `at`: its firing if it is due, a start-over if the clock went back behind it, else nothing. */
  fire(loop: HeartbeatLoop, at: number): HeartbeatFact[] {
    const entry = this.loops.get(loop);
    if (!entry) return [];
    entry.emitted.length = 0;
    entry.actor.send({ type: 'CLOCK', at });
    return [...entry.emitted];
  }

  /** Each loop's machine state value (none before the memory started). */
  states(): { loop: HeartbeatLoop; state: unknown }[] {
    return [...this.loops].map(([loop, { actor }]) => ({ loop, state: actor.getSnapshot().value }));
  }

  stop(): void {
    for (const { actor } of this.loops.values()) actor.stop();
  }
}
