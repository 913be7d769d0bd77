/**
 * One run of a stage as a pure value: it starts with the handlers that apply (the others are
 * skipped), takes each handler's first result as it arrives, and finishes when every handler
 * answered or its timeout was recorded, whichever comes first. What the handlers are asked and
 * when their answers arrive are messages of the turn's journal; this only folds them, so a
 * replay finishes the stage the same way. Changes merge in handler order (`finishStage`).
 */
import { finishStage, type HandlerResult } from './finishStage.ts';
import { skipReason } from './handlerScope.ts';
import { assertStageInput } from './stageInputError.ts';
import type { HandlerRef, StagePipelineInput, StagePipelineOutput } from './stageTypes.ts';

export type StageRun = Readonly<{
  /** The run's number within its turn: handler results and the timeout name it. */
  run: number;
  input: StagePipelineInput;
  /** One per handler, in handler order. */
  results: readonly HandlerResult[];
}>;

/** What a handler answered: a value to check against the stage, or a rejection. */
export type HandlerSettlement = Readonly<{ kind: 'resolved'; value: unknown }> | Readonly<{ kind: 'rejected'; error: string }>;

export const startStageRun = (run: number, input: StagePipelineInput): StageRun => {
  assertStageInput(input);
  return {
    run,
    input,
    results: input.handlers.map((handler): HandlerResult => {
      const reason = skipReason(handler, input.stage, input.scope);
      return reason === null ? { kind: 'pending' } : { kind: 'skipped', reason };
    }),
  };
};

/** The handlers the run is waiting for (to ask them, at the start). */
export const awaitedHandlers = (run: StageRun): HandlerRef[] => run.input.handlers.filter((_, i) => run.results[i]?.kind === 'pending');

/** Records a handler's first answer; a late, repeated or unknown one changes nothing (the same run is returned). */
export const settleHandler = (run: StageRun, handlerId: string, settlement: HandlerSettlement): StageRun => {
  const index = run.input.handlers.findIndex((h) => h.id === handlerId);
  if (index < 0 || run.results[index]?.kind !== 'pending') return run;
  return { ...run, results: run.results.map((r, i) => (i === index ? settlement : r)) };
};

export const isSettled = (run: StageRun): boolean => run.results.every((r) => r.kind !== 'pending');

/** The stage's output; handlers still pending count as timed out. */
export const finishStageRun = (run: StageRun): StagePipelineOutput => finishStage(run.input, run.results);
