/**
 * Journaling at the actor boundary: a message is appended as `InputDelivered` before the
 * actor processes it; replay re-delivers these and expects the same facts after each.
 */
import { defineEvent, type EventUnion } from '../defineEvent.ts';
import { nonEmptyString, object, unknown } from '../schema.ts';

export const journalEvents = {
  InputDelivered: defineEvent('InputDelivered', object({ to: nonEmptyString(), message: unknown() })),
} as const;

export type JournalEvent = EventUnion<typeof journalEvents>;
