/**
 * One heartbeat loop (distill, archive, merge, review, or the rule distiller) as an XState
 * machine on virtual time: it never arms a timer of its own. Each `CLOCK` message carries the
 * time; when the loop is due it emits `HeartbeatFired` and the next due time is one interval
 * after this firing (a long gap fires once, not once per missed interval). A firing's `since` is
 * the loop's previous firing, or its start: what happened after it is the loop's work. A loop
 * that fired before a restart is started from that firing (`since`), so it resumes where it
 * left off rather than from the restart. A clock that went back (a reading before the loop's
 * `since`, at a restart or in a CLOCK) starts the loop over from that reading, recorded as
 * `HeartbeatStartedOver` so the next restart resumes from there: without it the loop would
 * wait until the clock caught up again, which may be years.
 */
import { enqueueActions, setup } from 'xstate';
import type { EventNamed } from '../../events/index.ts';

export type HeartbeatLoop = 'distill' | 'archive' | 'merge' | 'review' | 'rules';

/** The spec's defaults: distill 30 min, archive 60 min, merge 120 min, review 120 min, rules 10 min. */
export const DEFAULT_HEARTBEAT_INTERVALS_MS: Readonly<Record<HeartbeatLoop, number>> = {
  distill: 30 * 60_000,
  archive: 60 * 60_000,
  merge: 120 * 60_000,
  review: 120 * 60_000,
  rules: 10 * 60_000,
};

/** `since`: where the loop left off before this start (its last firing or start-over), if it ran before. */
export type HeartbeatInput = Readonly<{ loop: HeartbeatLoop; intervalMs: number; startAt: number; since?: number }>;
/** `since`: the previous firing, or the start; the next firing covers what happened after it. */
export type HeartbeatContext = Readonly<{ loop: HeartbeatLoop; intervalMs: number; dueAt: number; since: number }>;
export type HeartbeatMessage = Readonly<{ type: 'CLOCK'; at: number }>;
export type HeartbeatFact = EventNamed<'HeartbeatFired'> | EventNamed<'HeartbeatStartedOver'>;

/** Whether a loop started with `input` starts over: it left off later than its start (the clock went back). */
export const startsOver = (input: HeartbeatInput): boolean => input.since !== undefined && input.since > input.startAt;

export const heartbeatMachine = setup({
  types: {
    context: {} as HeartbeatContext,
    input: {} as HeartbeatInput,
    events: {} as HeartbeatMessage,
    emitted: {} as HeartbeatFact,
  },
  guards: {
    due: ({ context, event }) => event.at >= context.dueAt,
    wentBack: ({ context, event }) => event.at < context.since,
  },
  actions: {
    fire: enqueueActions(({ context, event, enqueue }) => {
      enqueue.emit({ type: 'HeartbeatFired', data: { loop: context.loop, at: event.at, since: context.since } });
      enqueue.assign({ since: event.at, dueAt: event.at + context.intervalMs });
    }),
    startOver: enqueueActions(({ context, event, enqueue }) => {
      enqueue.emit({ type: 'HeartbeatStartedOver', data: { loop: context.loop, at: event.at, leftOffAt: context.since } });
      enqueue.assign({ since: event.at, dueAt: event.at + context.intervalMs });
    }),
  },
}).createMachine({
  id: 'heartbeat',
  context: ({ input }) => {
    if (!(input.intervalMs > 0))
      throw new RangeError(`heartbeat '${input.loop}': the interval must be a positive number of ms, got ${input.intervalMs}`);
    // Left off later than the start means the clock went back since: the memory records the start-over (`startsOver`).
    const since = input.since !== undefined && !startsOver(input) ? input.since : input.startAt;
    return { loop: input.loop, intervalMs: input.intervalMs, dueAt: since + input.intervalMs, since };
  },
  initial: 'waiting',
  states: {
    waiting: {
      on: {
        CLOCK: [
          { guard: 'wentBack', actions: 'startOver' },
          { guard: 'due', actions: 'fire' },
        ],
      },
    },
  },
});
