/**
 * Merges the changes of one stage in handler order, never completion order, so a replay
 * merges the same way. Pure.
 */
import type { StageChange, StageContext } from './stageTypes.ts';

export type AppliedChange = Readonly<{ handlerId: string; change: StageChange }>;

/**
 * Applies the changes of a stage to the context the handlers saw, in this order:
 * 1. `set` fields — a later handler overrides an earlier one;
 * 2. `rewriteArgs` — overwritten key by key, later handlers last;
 * 3. `redact` — every redaction, in handler order, on the result as set in step 1, so no
 *    handler's replacement can bring back text another handler redacted;
 * 4. `inject` — concatenated in handler order;
 * 5. `deny` — the first denial stands (with its handler id); so does the first `askApproval`;
 * 6. `response` — a later handler overrides an earlier one.
 *
 * @example mergeChanges(ctx, [{ handlerId: 'a', change: { set: { input: 'x' } } }]).input // 'x'
 */
export const mergeChanges = (context: StageContext, changes: readonly AppliedChange[]): StageContext => {
  let next: StageContext = context;
  const changedBy = (handlerId: string): readonly string[] => [...(next.callsChangedBy ?? []), handlerId];
  for (const { handlerId, change } of changes) {
    if (change.set) next = { ...next, ...change.set, ...(change.set.toolCalls ? { callsChangedBy: changedBy(handlerId) } : {}) };
  }
  for (const { handlerId, change } of changes) {
    if (change.rewriteArgs && next.toolCall)
      next = {
        ...next,
        toolCall: { ...next.toolCall, args: { ...next.toolCall.args, ...change.rewriteArgs } },
        callsChangedBy: changedBy(handlerId),
      };
  }
  for (const { change } of changes) {
    for (const { find, replaceWith } of change.redact ?? []) {
      if (next.toolResult !== null) next = { ...next, toolResult: next.toolResult.replaceAll(find, replaceWith) };
    }
  }
  for (const { change } of changes) if (change.inject) next = { ...next, injected: [...next.injected, ...change.inject] };
  for (const { handlerId, change } of changes) {
    if (change.deny && next.denial === null) next = { ...next, denial: { handlerId, reason: change.deny.reason } };
    if (change.askApproval && !next.approvalAsked) next = { ...next, approvalAsked: { handlerId, reason: change.askApproval.reason } };
  }
  for (const { change } of changes) if (change.response !== undefined) next = { ...next, response: change.response };
  return next;
};

/** A stage short-circuits when any of its changes answers. */
export const shortCircuits = (changes: readonly AppliedChange[]): boolean => changes.some(({ change }) => change.response !== undefined);
