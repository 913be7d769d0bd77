/**
 * Ends a stage: from what each handler did, in handler order, the outcomes and the merged
 * context. Pure; completion order never reaches it.
 */
import { checkChange } from './checkChange.ts';
import { mergeChanges, shortCircuits, type AppliedChange } from './mergeChanges.ts';
import type { HandlerOutcome, StagePipelineInput, StagePipelineOutput } from './stageTypes.ts';

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
      // A refused change that denied keeps its deny: the call stays denied, and the refusal is recorded beside it.
      if (!checked.ok && checked.denied) return { ...who, status: 'changed', change: checked.denied, error: checked.error };
      if (!checked.ok) return { ...who, status: 'failed', error: checked.error };
      return checked.change ? { ...who, status: 'changed', change: checked.change } : { ...who, status: 'unchanged' };
    }
    default: {
      const unhandled: never = result;
      throw new Error(`stage pipeline: unknown handler result ${(unhandled as { kind: string }).kind}`);
    }
  }
};

/**
 * The stage's output: one outcome per handler, in handler order, and the context with every
 * admitted change merged in that order.
 * @example finishStage(input, input.handlers.map(() => ({ kind: 'pending' }))) // every handler timed out
 */
export const finishStage = (input: StagePipelineInput, results: readonly HandlerResult[]): StagePipelineOutput => {
  const outcomes = input.handlers.map((_, i) => outcomeOf(input, i, results[i] ?? { kind: 'pending' }));
  const applied: AppliedChange[] = outcomes.flatMap((o) =>
    o.status === 'changed' && o.change ? [{ handlerId: o.handlerId, change: o.change }] : [],
  );
  return { stage: input.stage, context: mergeChanges(input.context, applied), shortCircuit: shortCircuits(applied), outcomes };
};
