/**
 * What every running machine is doing, from XState's inspection events: which actors exist,
 * the machine each runs, its current state, how many events it took, and the latest events
 * between actors. The web UI's machines view reads it. A view of the live system only (the log
 * stays the truth; time travel replays it); bounded: finished actors beyond MAX_ACTORS are
 * forgotten oldest first, and only the last MAX_RECENT_EVENTS events are kept.
 */
import type { AnyActorRef, InspectionEvent } from 'xstate';

export const MAX_ACTORS = 300;
export const MAX_RECENT_EVENTS = 200;

export type WatchedActor = {
  sessionId: string;
  id: string;
  systemId: string | null;
  /** The id of the machine it runs (null: not a state machine, such as a promise or callback actor). */
  machine: string | null;
  state: unknown;
  status: string;
  events: number;
  lastEvent: string | null;
  updatedAt: number;
};

export type WatchedEvent = Readonly<{ at: number; from: string | null; to: string; type: string }>;

type MachineLogic = { id: string; root: unknown };

const isMachine = (logic: unknown): logic is MachineLogic =>
  typeof logic === 'object' && logic !== null && 'root' in logic && 'states' in logic && typeof (logic as { id?: unknown }).id === 'string';

export class MachineWatch {
  private readonly actors = new Map<string, WatchedActor>();
  private readonly definitions = new Map<string, MachineLogic>();
  private readonly recent: WatchedEvent[] = [];
  private version = 0;

  constructor(private readonly now: () => number) {}

  /** The inspection observer to give `createActor` (through the kernel's inspect facility). */
  readonly inspect = (event: InspectionEvent): void => {
    const ref = event.actorRef as AnyActorRef;
    switch (event.type) {
      case '@xstate.actor': {
        const logic: unknown = (ref as unknown as { logic?: unknown }).logic;
        const machine = isMachine(logic) ? logic.id : null;
        if (machine && isMachine(logic) && !this.definitions.has(machine)) this.definitions.set(machine, logic);
        const systemId = (ref as unknown as { options?: { systemId?: string } }).options?.systemId ?? null;
        this.actors.set(ref.sessionId, {
          sessionId: ref.sessionId,
          id: ref.id,
          systemId,
          machine,
          state: null,
          status: 'active',
          events: 0,
          lastEvent: null,
          updatedAt: this.now(),
        });
        this.forget();
        break;
      }
      case '@xstate.snapshot': {
        const actor = this.actors.get(ref.sessionId);
        if (!actor) return;
        const snapshot = event.snapshot as { value?: unknown; status?: string };
        actor.state = snapshot.value ?? null;
        actor.status = snapshot.status ?? actor.status;
        actor.lastEvent = event.event.type;
        actor.updatedAt = this.now();
        break;
      }
      case '@xstate.event': {
        const actor = this.actors.get(ref.sessionId);
        if (actor) actor.events += 1;
        const from = event.sourceRef ? (this.actors.get(event.sourceRef.sessionId)?.id ?? null) : null;
        this.recent.push({ at: this.now(), from, to: actor?.id ?? ref.sessionId, type: event.event.type });
        if (this.recent.length > MAX_RECENT_EVENTS) this.recent.splice(0, this.recent.length - MAX_RECENT_EVENTS);
        break;
      }
      default:
        return;
    }
    this.version += 1;
  };

  /** Grows with every change: a reader sends a new view only when it moved. */
  get changes(): number {
    return this.version;
  }

  /** Each machine that ran, by machine id. */
  machines(): ReadonlyMap<string, MachineLogic> {
    return this.definitions;
  }

  view(): Readonly<{ actors: readonly WatchedActor[]; events: readonly WatchedEvent[] }> {
    return { actors: [...this.actors.values()].map((a) => ({ ...a })), events: [...this.recent] };
  }

  private forget(): void {
    if (this.actors.size <= MAX_ACTORS) return;
    for (const [key, actor] of this.actors) {
      if (this.actors.size <= MAX_ACTORS) return;
      if (actor.status !== 'active') this.actors.delete(key);
    }
  }
}
