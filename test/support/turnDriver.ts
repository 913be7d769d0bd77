/**
 * Drives one turn through `decideTurn` and, beside it, the XState `turnMachine`, with the
 * messages a `TurnWorld` makes, and checks what must hold after every message: junk returns
 * the very state it was given and no facts, a real answer is never ignored, nothing follows
 * `TurnCompleted`, the machine emits exactly the decider's facts, and a turn that is not done
 * always waits for something the world can answer.
 */
import { createActor } from 'xstate';
import { expect } from 'vitest';
import {
  decideTurn,
  initialTurnState,
  turnMachine,
  type Toolset,
  type TurnFact,
  type TurnInputEvent,
  type TurnInputMessage,
  type TurnState,
} from '../../machines/turn/index.ts';
import type { DrainPlan } from './turnArbitraries.ts';
import { TurnWorld } from './turnWorld.ts';

export type JournalEntry = Readonly<{ message: TurnInputMessage; junk: boolean; facts: readonly TurnFact[] }>;

export const describeMessage = (m: TurnInputEvent): string => `${m.type} ${JSON.stringify(m.data)}`;

export class TurnDriver {
  state: TurnState;
  readonly world = new TurnWorld();
  readonly journal: JournalEntry[] = [];
  private readonly actor;
  private emitted: TurnFact[] = [];

  constructor(readonly toolset: Toolset) {
    this.state = initialTurnState(toolset);
    this.actor = createActor(turnMachine, { input: { toolset } });
    this.actor.on('*', (fact: TurnFact) => this.emitted.push(fact));
    this.actor.start();
  }

  deliver(event: TurnInputEvent): void {
    const message: TurnInputMessage = { ...event, at: this.journal.length + 1 };
    const label = `#${this.journal.length} ${describeMessage(event)}`;
    const junk = !this.world.expects(event);
    const before = this.state;
    const { state, facts } = decideTurn(before, message);
    if (this.world.completed) expect(facts, `facts after TurnCompleted, for ${label}`).toEqual([]);
    if (junk) {
      expect(state === before, `${label} answers nothing the turn asked for, yet the state changed`).toBe(true);
      expect(facts, `${label} answers nothing the turn asked for, yet decided facts`).toEqual([]);
    } else {
      expect(state !== before, `${label} answers what the turn asked for, yet the turn ignored it`).toBe(true);
    }
    if (this.actor.getSnapshot().status === 'active') {
      this.emitted = [];
      this.actor.send(message);
      expect(this.emitted, `the machine's facts for ${label}`).toEqual(facts);
      expect(this.actor.getSnapshot().value, `the machine's state after ${label}`).toBe(state.phase);
    }
    this.state = state;
    this.journal.push({ message, junk, facts });
    this.world.accept(event, facts);
    if (this.world.requested && !this.world.completed && !this.world.outstanding()) {
      throw new Error(`after ${label} the turn waits in ${state.phase} for nothing the world was asked for`);
    }
  }

  /** Answers whatever is outstanding, from `plan`, until the turn completes; returns how many messages it took. */
  drain(plan: DrainPlan, bound: number): number {
    let n = 0;
    for (; !this.world.completed; n++) {
      if (n > bound) throw new Error(`the turn did not complete within ${bound} answers (it is in ${this.state.phase})`);
      const message = this.world.drainMessage(plan, n);
      if (!message) throw new Error(`the turn is in ${this.state.phase} and waits for nothing`);
      this.deliver(message);
    }
    expect(this.actor.getSnapshot().status, 'the machine is done when the decider is').toBe('done');
    return n;
  }

  facts(): TurnFact[] {
    return this.journal.flatMap((e) => e.facts);
  }
}
