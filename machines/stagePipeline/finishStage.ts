/**
 * Ends a stage: from what each handler did, in handler order, the outcomes, the merged
 * context and the facts to journal. Pure; completion order never reaches it.
 */
import { checkChange } from './checkChange.ts';
import { mergeChanges, shortCircuits, type AppliedChange } from './mergeChanges.ts';
import type { HandlerOutcome, StageFact, StagePipelineInput, StagePipelineOutput } from './stageTypes.ts';

/** Where one handler stands; `pending` at the end of a stage means it timed out. */
export type HandlerResult =
  | Readonly<{ kind: 'pending' }>
  | Readonly<{ kind: 'skipped'; reason: string }>
  | Readonly<{ kind: 'resolved'; value: unknown }>
  | Readonly<{ kind: 'rejected'; error: string }>;

const outcomeOf = (input: StagePipelineInput, index: number, result: HandlerResult): HandlerOutcome => {
  const handler = input.handlers[index]!;
  const who = { handlerId: handler.id, plugin: handler.plugin };
  switch (result.kind) {
    case 'pending':
      return { ...who, status: 'timed_out', error: `no result within ${input.timeoutMs} ms` };
    case 'skipped':
      return { ...who, status: 'skipped', reason: result.reason };
    case 'rejected':
      return { ...who, status: 'failed', error: result.error };
    case 'resolved': {
      const checked = checkChange(input.stage, result.value);
      if (!checked.ok) return { ...who, status: 'failed', error: checked.error };
      return checked.change ? { ...who, status: 'changed', change: checked.change } : { ...who, status: 'unchanged' };
    }
    default: {
      const unhandled: never = result;
      throw new Error(`stage pipeline: unknown handler result ${(unhandled as { kind: string }).kind}`);
    }
  }
};

const factOf = (input: StagePipelineInput, outcome: HandlerOutcome): StageFact => {
  const data = { stage: input.stage, handlerId: outcome.handlerId, plugin: outcome.plugin };
  switch (outcome.status) {
    case 'changed':
      return { type: 'StageHandlerChanged', data: { ...data, change: outcome.change! } };
    case 'unchanged':
      return { type: 'StageHandlerUnchanged', data };
    case 'failed':
      return { type: 'StageHandlerFailed', data: { ...data, error: outcome.error ?? 'failed' } };
    case 'timed_out':
      return { type: 'StageHandlerTimedOut', data: { ...data, timeoutMs: input.timeoutMs } };
    case 'skipped':
      return { type: 'StageHandlerSkipped', data: { ...data, reason: outcome.reason ?? 'skipped' } };
    default: {
      const unhandled: never = outcome.status;
      throw new Error(`stage pipeline: unknown handler status ${String(unhandled)}`);
    }
  }
};

/**
 * The stage's output and its facts (one per handler, in handler order, then `StageCompleted`).
 * @example finishStage(input, input.handlers.map(() => ({ kind: 'pending' }))) // every handler timed out
 */
export const finishStage = (
  input: StagePipelineInput,
  results: readonly HandlerResult[],
): Readonly<{ output: StagePipelineOutput; facts: StageFact[] }> => {
  const outcomes = input.handlers.map((_, i) => outcomeOf(input, i, results[i] ?? { kind: 'pending' }));
  const applied: AppliedChange[] = outcomes.flatMap((o) =>
    o.status === 'changed' && o.change ? [{ handlerId: o.handlerId, change: o.change }] : [],
  );
  const shortCircuit = shortCircuits(applied);
  const output: StagePipelineOutput = { stage: input.stage, context: mergeChanges(input.context, applied), shortCircuit, outcomes };
  const completed: StageFact = {
    type: 'StageCompleted',
    data: { stage: input.stage, shortCircuit, changedBy: applied.map((a) => a.handlerId) },
  };
  return { output, facts: [...outcomes.map((o) => factOf(input, o)), completed] };
};
