/**
 * Where a turn's effects go: the model through the `llm` facility, tools and stage handlers
 * through what the plugins offer. A missing model is a failure the turn records like any other.
 */
import type { HandlerInput, HandlerResolution } from '../../machines/stagePipeline/index.ts';
import type { ToolInvocation, ToolResult, Toolset } from '../../machines/turn/index.ts';
import type { LlmFacility } from '../llm/llmFacility.ts';
import type { TurnEffects } from './turnActor.ts';

/** What the plugins bring to a turn (the plugins facility has this shape). */
export type TurnPlugins = Readonly<{
  /** Their tools, stage handlers and output channels, as registered now. */
  toolset(): Toolset;
  /** `conversation`: the scope of the turn the call belongs to (tools that act on "this conversation" read it). */
  callTool(invocation: ToolInvocation, signal: AbortSignal, conversation?: string): Promise<ToolResult>;
  runHandler(input: HandlerInput, signal: AbortSignal): Promise<HandlerResolution>;
}>;

export class ModelMissing extends Error {}

export const modelEffects = (llm: LlmFacility): Pick<TurnEffects, 'complete'> => ({
  complete: async (call, { signal, onDelta }) => {
    if ('missing' in llm) throw new ModelMissing(llm.missing);
    const answer = await llm.chain.complete(
      { model: llm.model, messages: call.messages, tools: call.tools, stream: true },
      { signal, onDelta: (delta) => delta.text && onDelta(delta.text) },
    );
    return { text: answer.text, toolCalls: answer.toolCalls, finishReason: answer.finishReason, source: answer.source };
  },
});
