/**
 * Runs one stage the way a turn does, from the pure stage run: handlers are "asked" when the
 * run starts, the test settles them by hand in the order it likes, and time moves only when
 * the test advances it (the stage times out when its timeout has passed).
 */
import {
  awaitedHandlers,
  finishStageRun,
  isSettled,
  settleHandler,
  startStageRun,
  type HandlerInput,
  type StagePipelineInput,
  type StagePipelineOutput,
  type StageRun,
} from '../../machines/stagePipeline/index.ts';

export const runStage = (input: StagePipelineInput) => {
  let run: StageRun = startStageRun(0, input);
  const seen: HandlerInput[] = awaitedHandlers(run).map((h) => ({
    handlerId: h.id,
    stage: input.stage,
    context: structuredClone(input.context),
  }));
  const started = seen.map((s) => s.handlerId);
  let elapsed = 0;
  let output: StagePipelineOutput | null = isSettled(run) ? finishStageRun(run) : null;
  const settleOne = (id: string, how: 'resolve' | 'reject', value?: unknown) => {
    if (!started.includes(id)) throw new Error(`handler '${id}' was never started (started: ${started.join(', ') || 'none'})`);
    if (output) return; // a late answer: the stage has finished
    run = settleHandler(
      run,
      id,
      how === 'resolve' ? { kind: 'resolved', value } : { kind: 'rejected', error: value instanceof Error ? value.message : String(value) },
    );
    if (isSettled(run)) output = finishStageRun(run);
  };
  return {
    started,
    seen,
    /** Settles handlers one at a time, in the order given. */
    settle(...steps: [id: string, how: 'resolve' | 'reject', value?: unknown][]) {
      for (const [id, how, value] of steps) settleOne(id, how, value);
    },
    /** Moves time on; at the timeout the stage finishes with what it has. */
    advance(ms: number) {
      elapsed += ms;
      if (!output && elapsed >= input.timeoutMs) output = finishStageRun(run);
    },
    done: () => output !== null,
    output: (): StagePipelineOutput => {
      if (!output) throw new Error('the stage has not finished: settle its handlers or advance time past its timeout');
      return output;
    },
  };
};
