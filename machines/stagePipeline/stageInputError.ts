/** Refuses a stage input the pipeline cannot run faithfully, naming what is wrong. Pure. */
import { HologramError } from '../../events/index.ts';
import { STAGES, TOOL_STAGES, type StagePipelineInput } from './stageTypes.ts';

export class StageInputError extends HologramError {
  readonly code = 'STAGE_INPUT_INVALID';
  constructor(readonly problem: string) {
    super(`cannot run the stage: ${problem}`);
  }
}

/** Throws a `StageInputError` for an unknown stage, a bad timeout, a tool stage without its tool, or duplicate handler ids. */
export const assertStageInput = (input: StagePipelineInput): void => {
  const { stage, timeoutMs, handlers, context, scope } = input;
  if (!STAGES.includes(stage)) throw new StageInputError(`unknown stage '${String(stage)}' (stages: ${STAGES.join(', ')})`);
  if (!(Number.isFinite(timeoutMs) && timeoutMs > 0))
    throw new StageInputError(`timeoutMs must be a positive number of milliseconds, got ${timeoutMs}`);
  if (TOOL_STAGES.includes(stage) && (!context.toolCall || !scope)) {
    throw new StageInputError(`${stage} needs context.toolCall and scope (the tool and the plugin that owns it)`);
  }
  const seen = new Set<string>();
  for (const { id } of handlers) {
    if (seen.has(id)) throw new StageInputError(`handler id '${id}' is listed twice in ${stage}`);
    seen.add(id);
  }
};
