/**
 * One stage of the hook pipeline as an XState machine: every applicable handler starts at
 * once as a `handler` child, each settles on its own (a rejection fails only that handler),
 * and the stage ends when all have settled or at its timeout, whichever comes first. Pure:
 * handlers are provided at run time, time comes from the actor's clock, and the result is
 * merged in handler order by `finishStage`.
 */
import { assign, enqueueActions, fromPromise, setup, type DoneActorEvent, type ErrorActorEvent } from 'xstate';
import { messageOf } from '../../events/index.ts';
import { finishStage, type HandlerResult } from './finishStage.ts';
import { skipReason } from './handlerScope.ts';
import { assertStageInput } from './stageInputError.ts';
import type { HandlerInput, StageChange, StageFact, StagePipelineInput, StagePipelineOutput } from './stageTypes.ts';

/** What a `handler` actor resolves with: a change, or nothing for an audit. Checked again at run time. */
export type HandlerResolution = StageChange | null | undefined;

export type StagePipelineContext = {
  input: StagePipelineInput;
  /** One per handler, in handler order. */
  results: HandlerResult[];
  finished: StagePipelineOutput | null;
};

type HandlerSettled = DoneActorEvent<unknown> | ErrorActorEvent<unknown>;

/** The child id of the handler at `index`; ids are positional, so handler ids need no escaping. */
export const handlerChildId = (index: number): string => `handler-${index}`;

const indexOf = (context: StagePipelineContext, actorId: string) => context.results.findIndex((_, i) => handlerChildId(i) === actorId);

/** A handler that rejects with something other than an Error or a string is described as such. */
const errorMessage = (error: unknown): string =>
  error instanceof Error || typeof error === 'string' ? messageOf(error) : `rejected with ${String(error)}`;

/** Records a handler's first settlement; later or unknown ones change nothing. */
const settle = (context: StagePipelineContext, event: HandlerSettled): HandlerResult[] => {
  const index = indexOf(context, event.actorId);
  if (index < 0 || context.results[index]?.kind !== 'pending') return context.results;
  const result: HandlerResult =
    'output' in event ? { kind: 'resolved', value: event.output } : { kind: 'rejected', error: errorMessage(event.error) };
  return context.results.map((r, i) => (i === index ? result : r));
};

export const stagePipelineMachine = setup({
  types: {
    context: {} as StagePipelineContext,
    events: {} as HandlerSettled,
    input: {} as StagePipelineInput,
    output: {} as StagePipelineOutput,
    emitted: {} as StageFact,
  },
  actors: {
    handler: fromPromise<HandlerResolution, HandlerInput>(async ({ input }) => {
      throw new Error(`no handler logic was provided to the stage pipeline (handler '${input.handlerId}')`);
    }),
  },
  delays: {
    stageTimeout: ({ context }) => context.input.timeoutMs,
  },
  guards: {
    allSettled: ({ context }) => context.results.every((r) => r.kind !== 'pending'),
  },
  actions: {
    startHandlers: enqueueActions(({ context, enqueue }) => {
      const { stage, context: stageContext, handlers } = context.input;
      context.results.forEach((result, i) => {
        if (result.kind !== 'pending') return;
        const handlerId = handlers[i]!.id;
        // Each handler gets its own copy: one that mutates what it was given cannot reach the
        // others or the context the changes are merged onto (an unrecorded change would break replay).
        enqueue.spawnChild('handler', { id: handlerChildId(i), input: { handlerId, stage, context: structuredClone(stageContext) } });
      });
    }),
    recordSettled: assign({ results: ({ context, event }) => settle(context, event) }),
    finish: enqueueActions(({ context, enqueue }) => {
      const { output, facts } = finishStage(context.input, context.results);
      enqueue.assign({ finished: output });
      for (const fact of facts) enqueue.emit(fact);
    }),
  },
}).createMachine({
  id: 'stagePipeline',
  context: ({ input }) => {
    assertStageInput(input);
    return {
      input,
      results: input.handlers.map((handler): HandlerResult => {
        const reason = skipReason(handler, input.stage, input.scope);
        return reason === null ? { kind: 'pending' } : { kind: 'skipped', reason };
      }),
      finished: null,
    };
  },
  initial: 'running',
  states: {
    running: {
      entry: 'startHandlers',
      always: { guard: 'allSettled', target: 'finished' },
      after: { stageTimeout: 'finished' },
      on: {
        'xstate.done.actor.*': { actions: 'recordSettled' },
        'xstate.error.actor.*': { actions: 'recordSettled' },
      },
    },
    finished: { type: 'final', entry: 'finish' },
  },
  // `finish` (the final state's entry) has run by the time the output is read.
  output: ({ context }) => context.finished!,
});
