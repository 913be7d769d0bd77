/** The input scheduler's decisions. Stream: `scheduler`. */
import { defineEvent, type EventUnion } from '../defineEvent.ts';
import { array, integer, literal, nonEmptyString, nullable, number, object, string } from '../schema.ts';

export const SCHEDULER_STREAM = 'scheduler';

const level = () => literal(0, 1, 2, 3, 4);
const at = () => number();

export const schedulerEvents = {
  InputQueued: defineEvent(
    'InputQueued',
    object({
      inputId: nonEmptyString(),
      source: string(),
      origin: literal('user', 'plugin', 'kernel'),
      kind: literal('queued', 'interrupt'),
      declaredLevel: nullable(number()),
      level: level(),
      where: literal('inbox', 'pending'),
      at: at(),
    }),
  ),
  InboxPumped: defineEvent('InboxPumped', object({ inputIds: array(string()), at: at() })),
  TaskStarted: defineEvent('TaskStarted', object({ taskId: nonEmptyString(), at: at() })),
  TaskPreempted: defineEvent(
    'TaskPreempted',
    object({ taskId: nonEmptyString(), by: nonEmptyString(), preemptCount: integer(), stackDepth: integer(), at: at() }),
  ),
  TaskResumed: defineEvent('TaskResumed', object({ taskId: nonEmptyString(), stackDepth: integer(), at: at() })),
  TaskCompleted: defineEvent(
    'TaskCompleted',
    object({ taskId: nonEmptyString(), outcome: literal('done', 'failed', 'cancelled', 'abandoned'), at: at() }),
  ),
  StopRequested: defineEvent('StopRequested', object({ runningTaskId: nullable(string()), cancelBudget: array(string()), at: at() })),
  InputShortCircuited: defineEvent('InputShortCircuited', object({ inputId: nonEmptyString(), at: at() })),
  /** Recorded by builds before 2026-12-01: the inputs left the queue for a triage actor that did not exist. Kept so old logs read. */
  BacklogOffloaded: defineEvent(
    'BacklogOffloaded',
    object({ inputIds: array(string()), runningTaskId: nonEmptyString(), busyForMs: number(), at: at() }),
  ),
  /**
   * The scheduler has been busy past the offload time: these queued inputs are told so on their
   * channels and stay queued, in order (until a triage actor exists to take them).
   */
  BacklogAcknowledged: defineEvent(
    'BacklogAcknowledged',
    object({ inputIds: array(string()), runningTaskId: nonEmptyString(), busyForMs: number(), at: at() }),
  ),
  /**
   * From here on the scheduler decides by these rules (SCHEDULER_RULES): a daemon records it at
   * start when its rules are newer than the log's, so older stretches of a log replay by theirs.
   */
  SchedulerRulesAdopted: defineEvent('SchedulerRulesAdopted', object({ version: integer(), at: at() })),
} as const;

export type SchedulerEvent = EventUnion<typeof schedulerEvents>;
