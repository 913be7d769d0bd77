/**
 * Wires the turn's effects in one place, so the same `tool` and stage `handler` logic reaches
 * every stage and the tool batch (XState resolves a child's actors from the child's own
 * implementations, so each layer must be provided). Pure: it only composes logic.
 */
import type { PromiseActorLogic } from 'xstate';
import { stagePipelineMachine, type HandlerInput, type HandlerResolution } from '../stagePipeline/index.ts';
import { toolBatchMachine } from './toolBatch.ts';
import { turnMachine } from './turnMachine.ts';
import type { LlmAnswer, LlmCall, ToolInvocation, ToolResult } from './turnTypes.ts';

export type TurnEffects = Readonly<{
  llm: PromiseActorLogic<LlmAnswer, LlmCall>;
  tool: PromiseActorLogic<ToolResult, ToolInvocation>;
  handler: PromiseActorLogic<HandlerResolution, HandlerInput>;
}>;

/**
 * The turn machine with its effects provided.
 * @example createActor(provideTurn({ llm, tool, handler }), { input: { input: 'hi' } }).start()
 */
export const provideTurn = ({ llm, tool, handler }: TurnEffects) => {
  const stage = stagePipelineMachine.provide({ actors: { handler } });
  return turnMachine.provide({ actors: { llm, stage, toolBatch: toolBatchMachine.provide({ actors: { tool, stage } }) } });
};
