/**
 * Runs the input scheduler as a journaled actor. On start it replays its journal (a
 * divergence stops the boot with the first differing seq), restores its state, and marks
 * tasks left running by a previous process as abandoned. It ticks itself at the deadlines
 * the machine announces (cooldown end, backlog offload); the tick is journaled like any
 * other message.
 */
import { HologramError, SCHEDULER_STREAM, type Timers } from '../../events/index.ts';
import {
  DEFAULT_SCHEDULER_CONFIG,
  nextWakeAt,
  SCHEDULER_RULES,
  schedulerMachine,
  type InputDescriptor,
  type InputPayload,
  type SchedulerConfig,
  type SchedulerFact,
  type SchedulerMessage,
  type SchedulerState,
} from '../../machines/scheduler/index.ts';
import { JournaledActor, type Fact } from '../journal/journaledActor.ts';
import { replayJournal } from '../journal/replayJournal.ts';
import { Facility, INSPECT_FACILITY } from '../kernel/facilities.ts';
import type { KernelModule, ModuleContext } from '../kernel/kernelModule.ts';
import { setting, type Settings } from './config.ts';

export class SchedulerReplayDiverged extends HologramError {
  readonly code = 'SCHEDULER_REPLAY_DIVERGED';
  constructor(seq: number, expected: unknown, actual: unknown) {
    super(
      `replaying the scheduler's journal diverged at seq ${seq}: the log holds ${JSON.stringify(expected)} ` +
        `but this build decides ${JSON.stringify(actual)}; run 'homed log --stream scheduler --from ${seq}' to see it`,
    );
  }
}

export class DuplicateInput extends HologramError {
  readonly code = 'DUPLICATE_INPUT';
  constructor(id: string) {
    super(`input '${id}' was already submitted to the scheduler; give every input a fresh id (a retry must not run twice)`);
  }
}

export type SchedulerFacility = Readonly<{
  /** Hands an input to the scheduler; resolves with the facts it caused. */
  submit(input: InputDescriptor): Promise<readonly Fact[]>;
  finish(taskId: string, outcome: 'done' | 'failed' | 'cancelled'): Promise<readonly Fact[]>;
  stop(): Promise<readonly Fact[]>;
  /** Stops one input: the running task if it is that one, else it never starts; anything else is left alone. */
  cancel(inputId: string): Promise<readonly Fact[]>;
  state(): SchedulerState;
  /** What an input that has not ended says, and where its reply goes. */
  inputOf(inputId: string): InputPayload | undefined;
  /** Whether the input has not ended: it runs, is preempted, or waits. */
  holds(inputId: string): boolean;
  /** Called with every batch of facts once they are in the log (task runners, the stop button). */
  onFacts(listener: (facts: readonly SchedulerFact[]) => void): () => void;
}>;

export const schedulerConfigFrom = (settings: Settings): Partial<SchedulerConfig> => ({
  preemptCooldownMs: setting(settings, 'scheduler.preemptCooldownMs', DEFAULT_SCHEDULER_CONFIG.preemptCooldownMs),
  offloadAfterMs: setting(settings, 'scheduler.offloadAfterMs', DEFAULT_SCHEDULER_CONFIG.offloadAfterMs),
});

/** The inputs a scheduler holds: running, preempted or waiting (those that have not ended). */
const heldInputs = ({ running, stack, queue, inbox, pending }: SchedulerState): string[] =>
  [running, ...stack, ...queue, ...inbox, ...pending].filter((t) => t !== null).map((t) => t.id);

export const schedulerModule = (): KernelModule => {
  let actor: JournaledActor<typeof schedulerMachine> | undefined;
  let timer: unknown;
  let timers: Timers | undefined;
  return {
    name: 'scheduler',
    requires: [Facility.eventLog, Facility.config, Facility.clock, Facility.timers],
    provides: [Facility.scheduler],
    async init(context: ModuleContext) {
      const store = context.require(Facility.eventLog);
      const clock = context.require(Facility.clock);
      const wakeTimers = context.require(Facility.timers);
      timers = wakeTimers;
      const input = { config: schedulerConfigFrom(context.require(Facility.config)) };
      const replay = await replayJournal({ store, stream: SCHEDULER_STREAM, logic: schedulerMachine, input });
      if (replay.divergence) {
        const { seq, expected, actual } = replay.divergence;
        throw new SchedulerReplayDiverged(seq, expected, actual);
      }
      const listeners = new Set<(facts: readonly SchedulerFact[]) => void>();
      // Ids are unique for the scheduler's whole life: the machine forgets ended inputs, so a
      // re-submitted id is refused here, before it could run a second time.
      const payloads = new Map<string, InputPayload>();
      const notePayloads = (facts: readonly SchedulerFact[]) => {
        for (const fact of facts) {
          if (fact.type === 'TaskCompleted') payloads.delete(fact.data.taskId);
          else if (fact.type === 'InputShortCircuited') payloads.delete(fact.data.inputId);
        }
      };
      // Only inputs the restored scheduler still holds can run; the others ended.
      const held = new Set(heldInputs(replay.snapshot.context as SchedulerState));
      for (const message of replay.messages as SchedulerMessage[]) {
        if (message.type === 'input.arrive' && message.input.payload && held.has(message.input.id))
          payloads.set(message.input.id, message.input.payload);
      }
      const submitted = new Set(
        replay.messages.flatMap((m) =>
          (m as SchedulerMessage).type === 'input.arrive' ? [(m as Extract<SchedulerMessage, { type: 'input.arrive' }>).input.id] : [],
        ),
      );
      const inspect = context.optional(INSPECT_FACILITY);
      const journaled = new JournaledActor({
        store,
        stream: SCHEDULER_STREAM,
        logic: schedulerMachine,
        input,
        history: replay.messages,
        ...(inspect ? { inspect } : {}),
        onFacts: (facts) => {
          notePayloads(facts as readonly SchedulerFact[]);
          armTimer();
          for (const listener of listeners) listener(facts as readonly SchedulerFact[]);
        },
      });
      actor = journaled;
      const deliver = (message: SchedulerMessage) => journaled.deliver(message);
      const armTimer = () => {
        if (timer !== undefined) wakeTimers.clearTimer(timer);
        timer = undefined;
        const wakeAt = nextWakeAt(journaled.snapshot.context);
        if (wakeAt === null) return;
        timer = wakeTimers.setTimer(
          () => {
            timer = undefined;
            deliver({ type: 'tick', at: clock.now() }).catch((error: unknown) => context.fail(error));
          },
          Math.max(0, wakeAt - clock.now()),
        );
      };
      // A log written under older rules keeps them for what it holds; from now on this build's decide.
      if (journaled.snapshot.context.rules < SCHEDULER_RULES) {
        await deliver({ type: 'rules.adopt', at: clock.now(), version: SCHEDULER_RULES });
      }
      // Tasks running or suspended when the previous process ended cannot finish any more;
      // inputs that never started stay queued.
      const restored = journaled.snapshot.context;
      const orphans = new Set([restored.running, ...restored.stack].filter((t) => t !== null).map((t) => t.id));
      for (let running = restored.running; running && orphans.has(running.id); running = journaled.snapshot.context.running) {
        await deliver({ type: 'task.finish', at: clock.now(), taskId: running.id, outcome: 'abandoned' });
      }
      armTimer();
      context.provide(Facility.scheduler, {
        submit: (descriptor) => {
          if (submitted.has(descriptor.id)) return Promise.reject(new DuplicateInput(descriptor.id));
          submitted.add(descriptor.id);
          if (descriptor.payload) payloads.set(descriptor.id, descriptor.payload);
          return deliver({ type: 'input.arrive', at: clock.now(), input: descriptor });
        },
        finish: (taskId, outcome) => deliver({ type: 'task.finish', at: clock.now(), taskId, outcome }),
        stop: () => deliver({ type: 'stop', at: clock.now() }),
        cancel: (inputId) => deliver({ type: 'cancel', at: clock.now(), inputId }),
        state: () => journaled.snapshot.context,
        inputOf: (inputId) => payloads.get(inputId),
        holds: (inputId) => heldInputs(journaled.snapshot.context).includes(inputId),
        onFacts: (listener) => {
          listeners.add(listener);
          return () => listeners.delete(listener);
        },
      } satisfies SchedulerFacility);
    },
    stop() {
      if (timer !== undefined) timers?.clearTimer(timer);
      timer = undefined;
      actor?.stop();
    },
  };
};
