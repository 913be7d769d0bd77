/** The scheduler's vocabulary: tasks, its state, the messages it takes and the facts it emits. */
import type { EventNamed, SchedulerEvent, SecurityFinding } from '../../events/index.ts';

/** 0 = a queued task; 1–4 = interrupt levels (L4 is kernel-only). */
export type Level = 0 | 1 | 2 | 3 | 4;

export type Origin = 'user' | 'plugin' | 'kernel';

export type Task = Readonly<{
  id: string;
  source: string;
  origin: Origin;
  kind: 'queued' | 'interrupt';
  level: Level;
  preemptCount: number;
  lastPreemptedAt: number | null;
}>;

export type SchedulerConfig = Readonly<{
  /** A task preempted less than this long ago cannot be preempted again. */
  preemptCooldownMs: number;
  /** After the scheduler has been busy this long, each queued input is told so (and stays queued). */
  offloadAfterMs: number;
}>;

export const DEFAULT_SCHEDULER_CONFIG: SchedulerConfig = { preemptCooldownMs: 2_000, offloadAfterMs: 5 * 60_000 };

/**
 * The rules this build decides by. A log's scheduler decides by version 1 until a
 * SchedulerRulesAdopted fact says otherwise, so a log replays by the rules it was written under.
 *   1: the backlog told busy is the queued inputs only.
 *   2: waiting interrupts are told too (a person's own messages wait as interrupts).
 *   3: a person's input (origin 'user') preempts anyone else's task of a lower level, however
 *      often that task was preempted before (the starvation guard does not hold the person).
 */
export const SCHEDULER_RULES = 3;

export type SchedulerState = Readonly<{
  config: SchedulerConfig;
  /** The version of the rules deciding now (SCHEDULER_RULES when this build adopted its own). */
  rules: number;
  /** Latest time seen in a message; time never goes back. */
  now: number;
  /** Queued inputs that arrived while busy, not yet moved into the queue. */
  inbox: readonly Task[];
  /** Queued tasks, first in first out. */
  queue: readonly Task[];
  /** Interrupts waiting to run: higher level first, then arrival order. */
  pending: readonly Task[];
  /** Preempted tasks, bottom first; the running task sits on top of it. */
  stack: readonly Task[];
  running: Task | null;
  /** When the scheduler last went from idle to busy. */
  busySince: number | null;
  /** Inputs that were waiting when stop was pressed: short-circuited instead of run. */
  cancelBudget: readonly string[];
  /** Queued inputs already told that the agent is busy (BacklogAcknowledged): told once. */
  acknowledged: readonly string[];
}>;

export type InputDescriptor = Readonly<{
  id: string;
  source: string;
  origin: Origin;
  kind: 'queued' | 'interrupt';
  /** The level the source declared, for an interrupt; absent means L1. */
  level?: number;
  /** What the input says and where its reply goes: journaled with it, never read by the decisions. */
  payload?: InputPayload;
}>;

export type InputPayload = Readonly<{
  text: string;
  /** The channel (and target on it) the reply goes to; null when nobody waits for one. */
  replyChannel: string | null;
  replyTarget: string | null;
  /** The memory scope the input belongs to (`<channel>:<peer>`). */
  conversation: string | null;
  /** Who sent it (`owner`, `internal`, or a plugin-declared principal); absent in logs before principals. */
  principal?: string;
  /** What content review found in the text, and whether that withholds it from the model. */
  findings?: readonly SecurityFinding[];
  blocked?: boolean;
  /** A person's answer to a pending approval: the task resumes that turn instead of starting one. */
  resume?: Readonly<{ turn: string }> & EventNamed<'ApprovalAnswered'>['data'];
}>;

/** Messages the scheduler takes. Each carries the time it happened. */
export type SchedulerMessage =
  | Readonly<{ type: 'input.arrive'; at: number; input: InputDescriptor }>
  | Readonly<{ type: 'task.finish'; at: number; taskId: string; outcome: 'done' | 'failed' | 'cancelled' | 'abandoned' }>
  | Readonly<{ type: 'stop'; at: number }>
  /** Stop for one input only: stops it if it runs, short-circuits it if it waits; anything else is left alone. */
  | Readonly<{ type: 'cancel'; at: number; inputId: string }>
  | Readonly<{ type: 'tick'; at: number }>
  /** Decide by these rules from now on (sent at start when the log's are older); an older or equal version changes nothing. */
  | Readonly<{ type: 'rules.adopt'; at: number; version: number }>;

/** Facts the scheduler emits: its decisions, appended to the log (declared in the event catalog). */
export type SchedulerFact = SchedulerEvent;
