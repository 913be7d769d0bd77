/**
 * How much one plugin may inject: at most `waitingAtMost` of its inputs held by the scheduler
 * at once, and interrupts from a token bucket (a burst, then one every `interruptEveryMs`).
 * Pure: the caller brings the time (the kernel's clock) and how many of the plugin's inputs
 * the scheduler holds; the same arguments always give the same decision.
 */
import { HologramError } from '../../events/index.ts';
import { INJECTION_THROTTLED } from '../sdk/wireMethods.ts';

export type InjectionBounds = Readonly<{
  /** The plugin's inputs waiting or running in the scheduler (interrupts included) at most. */
  waitingAtMost: number;
  /** Interrupts a plugin may raise at once, with a full bucket. */
  interruptBurst: number;
  /** The bucket gains one interrupt per this many ms, up to the burst. */
  interruptEveryMs: number;
}>;

/**
 * A chat plugin waits for its inputs to be answered long before 32 of them pile up; queued
 * inputs run first in first out, so the person's message waits behind at most these 32.
 * Interrupts jump that queue: 8 at once, then 6 a minute, leave most of every minute to others.
 */
export const DEFAULT_INJECTION_BOUNDS: InjectionBounds = { waitingAtMost: 32, interruptBurst: 8, interruptEveryMs: 10_000 };

/** A plugin's interrupt allowance: the interrupts left, and from when the next one accrues. */
export type InterruptBucket = Readonly<{ tokens: number; since: number }>;

export type InjectionAsk = Readonly<{
  kind: 'queued' | 'interrupt';
  /** The plugin's inputs the scheduler holds (and those still being handed to it). */
  waiting: number;
  at: number;
}>;

export type InjectionDecision =
  | Readonly<{ admitted: true; bucket: InterruptBucket }>
  | Readonly<{ admitted: false; bucket: InterruptBucket; bound: 'waiting'; limit: number; waiting: number }>
  /** `retryInMs`: when the bucket gains its next interrupt, from `at`. */
  | Readonly<{ admitted: false; bucket: InterruptBucket; bound: 'interrupts'; limit: number; retryInMs: number }>;

export type InjectionRefusal = Extract<InjectionDecision, { admitted: false }>;

/** The bucket at `at`: what it gained since, never past the burst, never from time going back. */
export const refillBucket = (bucket: InterruptBucket, at: number, bounds: InjectionBounds): InterruptBucket => {
  const now = Math.max(at, bucket.since);
  const gained = Math.floor((now - bucket.since) / bounds.interruptEveryMs);
  const tokens = Math.min(bounds.interruptBurst, bucket.tokens + gained);
  // A full bucket gains nothing while it waits: the next interrupt accrues from its first use.
  return tokens >= bounds.interruptBurst ? { tokens, since: now } : { tokens, since: bucket.since + gained * bounds.interruptEveryMs };
};

/**
 * Admits or refuses one injection. A plugin seen for the first time (`bucket` null) starts full.
 * @example decideInjection(null, { kind: 'queued', waiting: 32, at: 0 }).admitted // false: 32 already wait
 */
export const decideInjection = (
  bucket: InterruptBucket | null,
  ask: InjectionAsk,
  bounds: InjectionBounds = DEFAULT_INJECTION_BOUNDS,
): InjectionDecision => {
  const current = refillBucket(bucket ?? { tokens: bounds.interruptBurst, since: ask.at }, ask.at, bounds);
  if (ask.waiting >= bounds.waitingAtMost) {
    return { admitted: false, bucket: current, bound: 'waiting', limit: bounds.waitingAtMost, waiting: ask.waiting };
  }
  if (ask.kind === 'queued') return { admitted: true, bucket: current };
  if (current.tokens < 1) {
    const retryInMs = current.since + bounds.interruptEveryMs - Math.max(ask.at, current.since);
    return { admitted: false, bucket: current, bound: 'interrupts', limit: bounds.interruptBurst, retryInMs };
  }
  return { admitted: true, bucket: { tokens: current.tokens - 1, since: current.since } };
};

type HeldTask = Readonly<{ id: string; source: string }>;

/** What the scheduler holds, as far as the bound needs it (the scheduler facility's `state()` has this shape). */
export type HeldInputs = Readonly<{
  running: HeldTask | null;
  stack: readonly HeldTask[];
  queue: readonly HeldTask[];
  inbox: readonly HeldTask[];
  pending: readonly HeldTask[];
  /** Waiting inputs a stop has cancelled: they end without running, so they no longer count. */
  cancelBudget: readonly string[];
}>;

/**
 * The inputs of `source` the scheduler holds: running, suspended or waiting; not those it has
 * forgotten (ended) nor those a stop cancelled.
 */
export const heldBy = (state: HeldInputs, source: string): number =>
  [state.running, ...state.stack, ...state.queue, ...state.inbox, ...state.pending].filter(
    (task) => task?.source === source && !state.cancelBudget.includes(task.id),
  ).length;

/** An injection past the plugin's bound: it was not recorded and will not run. */
export class InjectionThrottled extends HologramError {
  readonly code = INJECTION_THROTTLED;
  readonly bound: InjectionRefusal['bound'];
  readonly limit: number;
  constructor(
    readonly plugin: string,
    refusal: InjectionRefusal,
    bounds: InjectionBounds,
  ) {
    super(
      refusal.bound === 'waiting'
        ? `plugin '${plugin}' already has ${refusal.waiting} inputs waiting or running in the scheduler, and ${refusal.limit} is ` +
            `the most one plugin may have at once (bound 'waiting'): this input was refused, not queued; wait until some of ` +
            `them are handled (TaskCompleted), then inject again`
        : `plugin '${plugin}' has used its ${refusal.limit} interrupts and gains one every ${bounds.interruptEveryMs / 1_000} s ` +
            `(bound 'interrupts'): this interrupt was refused, not queued; the next is allowed in ${Math.ceil(refusal.retryInMs / 1_000)} s. ` +
            `Wait for its inputs to be handled, or inject it as a queued input`,
    );
    this.bound = refusal.bound;
    this.limit = refusal.limit;
  }
}
