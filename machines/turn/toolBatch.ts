/**
 * The one tool-batch implementation: every call of a round starts at once and goes
 * before_toolcall → tool → after_toolcall on its own; the batch ends when all calls are done.
 * Results and facts come out in call order, never completion order. Every path that runs
 * tools invokes this machine, so no path can skip the plugin hooks. Pure: the `tool` and
 * `stage` actors are provided at run time; stopping the batch stops every running child.
 */
import { enqueueActions, fromPromise, setup, type DoneActorEvent, type ErrorActorEvent } from 'xstate';
import { messageOf } from '../../events/index.ts';
import { stagePipelineMachine } from '../stagePipeline/index.ts';
import { startCall, stepCall, toStageCall, toolMessage, type BatchSettings, type CallState } from './toolCallStep.ts';
import type { RegisteredTool } from './toolRegistry.ts';
import type { LlmToolCall, StageHandlers, ToolInvocation, ToolResult, TurnFact, TurnMessage } from './turnTypes.ts';

export type ToolBatchInput = Readonly<{
  /** The turn's input text, for the stage context. */
  input: string;
  calls: readonly LlmToolCall[];
  /** Where each tool comes from: its owner is the scope of its tool stages. */
  tools: readonly RegisteredTool[];
  handlers: StageHandlers;
  stageTimeoutMs: number;
}>;

export type ToolBatchOutput = Readonly<{
  /** One tool message per call, in call order. */
  messages: readonly TurnMessage[];
  /** Every call's facts, call by call in call order. */
  facts: readonly TurnFact[];
  /** Every call was denied by before_toolcall (false for an empty batch). */
  allDenied: boolean;
  /** The first answer a tool stage gave, in call order: the turn short-circuits with it. */
  response: string | null;
}>;

type BatchContext = { settings: BatchSettings; calls: CallState[] };

type Settled = DoneActorEvent<unknown> | ErrorActorEvent<unknown>;

const CHILD = /^(before|tool|after)-(\d+)$/;

export const toolBatchMachine = setup({
  types: {
    context: {} as BatchContext,
    events: {} as Settled,
    input: {} as ToolBatchInput,
    output: {} as ToolBatchOutput,
  },
  actors: {
    stage: stagePipelineMachine,
    tool: fromPromise<ToolResult, ToolInvocation>(async ({ input }) => {
      throw new Error(`no tool logic was provided to the tool batch (tool '${input.name}')`);
    }),
  },
  guards: {
    allDone: ({ context }) => context.calls.every((c) => c.phase === 'done'),
  },
  actions: {
    advance: enqueueActions(({ context, event, enqueue }) => {
      const match = CHILD.exec(event.actorId);
      const index = Number(match?.[2] ?? -1);
      const state = context.calls[index];
      if (!state) return;
      const settled =
        'output' in event ? { ok: true as const, output: event.output } : { ok: false as const, error: messageOf(event.error) };
      const step = stepCall(context.settings, index, state, settled);
      enqueue.assign({ calls: context.calls.map((c, i) => (i === index ? step.state : c)) });
      const next = step.next;
      if (next?.src === 'stage') enqueue.spawnChild('stage', { id: next.id, input: next.input });
      else if (next?.src === 'tool') enqueue.spawnChild('tool', { id: next.id, input: next.input });
    }),
  },
}).createMachine({
  id: 'toolBatch',
  context: ({ input, spawn: spawnChild }) => {
    const settings: BatchSettings = {
      input: input.input,
      calls: input.calls.map(toStageCall),
      handlers: input.handlers,
      stageTimeoutMs: input.stageTimeoutMs,
    };
    const calls = settings.calls.map((_, i) => {
      const step = startCall(settings, i, input.tools);
      if (step.next?.src === 'stage') spawnChild('stage', { id: step.next.id, input: step.next.input });
      return step.state;
    });
    return { settings, calls };
  },
  initial: 'running',
  states: {
    running: {
      always: { guard: 'allDone', target: 'done' },
      on: {
        'xstate.done.actor.*': { actions: 'advance' },
        'xstate.error.actor.*': { actions: 'advance' },
      },
    },
    done: { type: 'final' },
  },
  output: ({ context }) => {
    const response = context.calls.find((c) => c.response !== null)?.response ?? null;
    return {
      messages: context.calls.map(toolMessage),
      facts: context.calls.flatMap((c) => c.facts),
      allDenied: context.calls.length > 0 && context.calls.every((c) => c.denied),
      response,
    };
  },
});
