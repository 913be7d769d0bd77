/**
 * Where a turn's effects go: the model through the `llm` facility, tools and stage handlers
 * through what the plugins offer. A missing model is a failure the turn records like any other.
 */
import type { HandlerInput, HandlerResolution } from '../../machines/stagePipeline/index.ts';
import type { ToolAccess } from '../../events/index.ts';
import type { ToolInvocation, ToolResult, Toolset } from '../../machines/turn/index.ts';
import type { LlmFacility } from '../llm/llmFacility.ts';
import type { TurnEffects } from './turnActor.ts';

/** Where a tool call comes from: what a tool acting on "this conversation" (or answering later, as a timer) needs. */
export type ToolCallOrigin = Readonly<{
  conversation: string;
  replyTo?: Readonly<{ channel: string; target?: string }>;
  /** Who the turn's input was from. */
  principal?: string;
}>;

/** What the plugins bring to a turn (the plugins facility has this shape). */
export type TurnPlugins = Readonly<{
  /** Their tools, stage handlers and output channels, as registered now. */
  toolset(): Toolset;
  /** What a registered tool declares it touches (what the sandbox checks), found without building a toolset. */
  accessOf(name: string): ToolAccess | undefined;
  /** `origin`: the conversation of the turn the call belongs to, and where its replies go. */
  callTool(invocation: ToolInvocation, signal: AbortSignal, origin?: ToolCallOrigin): Promise<ToolResult>;
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
