/**
 * One turn of the agent as an XState machine: on_input → pre_action → loop { llm → post_action
 * → tool batch } → before_output → output → after_output. A stage that answers jumps to the
 * output and after_output; STOP cancels whatever runs (its children's signals abort) and only
 * after_output still runs. Every step is emitted as a fact. Pure: the `llm`, `tool` and stage
 * `handler` logic is provided at run time, and no time is read here.
 */
import { assign, enqueueActions, fromPromise, setup, type ActorRefFrom } from 'xstate';
import { messageOf } from '../../events/index.ts';
import {
  createStageContext,
  stagePipelineMachine,
  type StageContext,
  type StageName,
  type StagePipelineOutput,
} from '../stagePipeline/index.ts';
import { toolBatchMachine, type ToolBatchOutput } from './toolBatch.ts';
import {
  DEFAULT_MAX_ROUNDS,
  DEFAULT_STAGE_TIMEOUT_MS,
  type LlmAnswer,
  type LlmCall,
  type LlmToolCall,
  type LlmToolDefinition,
  type StageHandlers,
  type TurnFact,
  type TurnInput,
  type TurnMessage,
  type TurnOutcome,
  type TurnOutput,
} from './turnTypes.ts';
import type { RegisteredTool } from './toolRegistry.ts';

export type TurnStop = Readonly<{ type: 'STOP' }>;

export type TurnContext = {
  input: string;
  tools: readonly RegisteredTool[];
  handlers: StageHandlers;
  stageTimeoutMs: number;
  maxRounds: number;
  /** What the stages saw last and changed. */
  stage: StageContext;
  messages: TurnMessage[];
  /**
   * Messages the log already holds: the turn's starting conversation (in TurnRequested), then
   * whatever the last LlmRequested added. Each request records only what came after.
   */
  recordedCount: number;
  /** The model's answer of this round, as post_action left it. */
  answer: LlmAnswer | null;
  /** Tool rounds run so far. */
  rounds: number;
  outcome: TurnOutcome | null;
  reply: string;
  /** Where the turn was when something ended it early (for the facts). */
  phase: string;
};

const definitions = (tools: readonly RegisteredTool[]): LlmToolDefinition[] =>
  tools.map((t) => ({ name: t.name, description: t.description, parameters: { ...t.parameters } }));

const stageRan = (output: StagePipelineOutput): TurnFact => ({
  type: 'StageRan',
  data: { stage: output.stage, shortCircuit: output.shortCircuit, outcomes: output.outcomes },
});

const toLlmCalls = (stage: StageContext): LlmToolCall[] =>
  stage.toolCalls.map((c) => ({ id: c.id, name: c.name, arguments: { ...c.args } }));

/** The stage's input for the turn's current context. */
const stageInputOf = (context: TurnContext, stage: StageName, fields: Partial<StageContext> = {}) => ({
  stage,
  context: { ...context.stage, response: null, ...fields },
  handlers: context.handlers[stage] ?? [],
  timeoutMs: context.stageTimeoutMs,
});

const roundLimitReply = (context: TurnContext): string =>
  `I stopped after ${context.rounds} tool rounds (the limit is ${context.maxRounds}) without reaching a final answer.`;

const deniedReply = (context: TurnContext, batch: ToolBatchOutput): string => {
  const text = context.answer?.text.trim();
  if (text) return text;
  return `I could not go on: every tool call was denied (${batch.messages.map((m) => m.content).join('; ')}).`;
};

type StageDone = { output: StagePipelineOutput };

export const turnMachine = setup({
  types: {
    context: {} as TurnContext,
    events: {} as TurnStop,
    input: {} as TurnInput,
    output: {} as TurnOutput,
    emitted: {} as TurnFact,
  },
  actors: {
    stage: stagePipelineMachine,
    toolBatch: toolBatchMachine,
    llm: fromPromise<LlmAnswer, LlmCall>(async () => {
      throw new Error('no llm logic was provided to the turn');
    }),
  },
  guards: {
    shortCircuited: ({ event }) => (event as unknown as StageDone).output.shortCircuit,
  },
  actions: {
    recordStage: enqueueActions(({ event, enqueue }) => {
      const { output } = event as unknown as StageDone;
      enqueue.emit(stageRan(output));
      enqueue.assign({ stage: ({ context }) => ({ ...output.context, response: context.stage.response }) });
    }),
    recordBatch: enqueueActions(({ event, enqueue }) => {
      const { output } = event as unknown as { output: ToolBatchOutput };
      for (const fact of output.facts) enqueue.emit(fact);
      enqueue.assign({ messages: ({ context }) => [...context.messages, ...output.messages], rounds: ({ context }) => context.rounds + 1 });
    }),
    answerFromStage: assign(({ event }) => ({
      outcome: 'short_circuited' as const,
      reply: (event as unknown as StageDone).output.context.response ?? '',
    })),
    failStage: assign(({ event }) => ({
      outcome: 'failed' as const,
      reply: `The turn failed: a stage could not run (${messageOf((event as unknown as { error: unknown }).error)}).`,
    })),
  },
}).createMachine({
  id: 'turn',
  context: ({ input }) => ({
    input: input.input,
    tools: input.tools ?? [],
    handlers: input.handlers ?? {},
    stageTimeoutMs: input.stageTimeoutMs ?? DEFAULT_STAGE_TIMEOUT_MS,
    maxRounds: input.maxRounds ?? DEFAULT_MAX_ROUNDS,
    stage: createStageContext(input.input),
    messages: [...(input.messages ?? [])],
    recordedCount: input.messages?.length ?? 0,
    answer: null,
    rounds: 0,
    outcome: null,
    reply: '',
    phase: 'on_input',
  }),
  initial: 'working',
  states: {
    working: {
      on: {
        STOP: {
          target: 'afterOutput',
          actions: enqueueActions(({ context, enqueue }) => {
            enqueue.emit({ type: 'TurnCancelled', data: { during: context.phase } });
            enqueue.assign({ outcome: 'cancelled', reply: '' });
          }),
        },
      },
      initial: 'onInput',
      states: {
        onInput: {
          entry: [
            assign({ phase: 'on_input' }),
            enqueueActions(({ context, enqueue }) => enqueue.emit({ type: 'InputAccepted', data: { input: context.input } })),
          ],
          invoke: {
            src: 'stage',
            input: ({ context }) => stageInputOf(context, 'on_input'),
            onDone: [
              { guard: 'shortCircuited', target: '#turn.sending', actions: ['recordStage', 'answerFromStage'] },
              { target: 'preAction', actions: 'recordStage' },
            ],
            onError: { target: '#turn.sending', actions: 'failStage' },
          },
        },
        preAction: {
          entry: assign({ phase: 'pre_action' }),
          invoke: {
            src: 'stage',
            input: ({ context }) => stageInputOf(context, 'pre_action'),
            onDone: [
              { guard: 'shortCircuited', target: '#turn.sending', actions: ['recordStage', 'answerFromStage'] },
              {
                target: 'callingLlm',
                actions: [
                  'recordStage',
                  assign({
                    messages: ({ context }) => [
                      ...context.messages,
                      ...context.stage.injected.map((content): TurnMessage => ({ role: 'system', content })),
                      { role: 'user', content: context.stage.input },
                    ],
                  }),
                ],
              },
            ],
            onError: { target: '#turn.sending', actions: 'failStage' },
          },
        },
        callingLlm: {
          entry: [
            assign({ phase: 'llm' }),
            enqueueActions(({ context, enqueue }) => {
              enqueue.emit({
                type: 'LlmRequested',
                data: {
                  round: context.rounds,
                  from: context.recordedCount,
                  added: context.messages.slice(context.recordedCount),
                  total: context.messages.length,
                  // The tools do not change within a turn: the first request names them.
                  ...(context.rounds === 0 ? { tools: definitions(context.tools) } : {}),
                },
              });
              enqueue.assign({ recordedCount: context.messages.length });
            }),
          ],
          invoke: {
            src: 'llm',
            input: ({ context }) => ({ messages: context.messages, tools: definitions(context.tools) }),
            onDone: {
              target: 'postAction',
              actions: enqueueActions(({ context, event, enqueue }) => {
                const { text, toolCalls, finishReason } = event.output;
                enqueue.emit({ type: 'LlmResponded', data: { round: context.rounds, text, toolCalls, finishReason } });
                enqueue.assign({ answer: { text, toolCalls, finishReason } });
              }),
            },
            onError: {
              target: '#turn.sending',
              actions: enqueueActions(({ context, event, enqueue }) => {
                const error = messageOf(event.error);
                enqueue.emit({ type: 'LlmFailed', data: { round: context.rounds, error } });
                enqueue.assign({ outcome: 'failed', reply: `The model could not answer: ${error}` });
              }),
            },
          },
        },
        postAction: {
          entry: assign({ phase: 'post_action' }),
          invoke: {
            src: 'stage',
            input: ({ context }) =>
              stageInputOf(context, 'post_action', {
                llmText: context.answer?.text ?? '',
                toolCalls: (context.answer?.toolCalls ?? []).map((c) => ({ id: c.id, name: c.name, args: c.arguments })),
              }),
            onDone: [
              { guard: 'shortCircuited', target: '#turn.sending', actions: ['recordStage', 'answerFromStage'] },
              {
                target: 'deciding',
                actions: [
                  'recordStage',
                  assign(({ context }) => {
                    const toolCalls = toLlmCalls(context.stage);
                    const text = context.stage.llmText ?? '';
                    const assistant: TurnMessage =
                      toolCalls.length > 0 ? { role: 'assistant', content: text, toolCalls } : { role: 'assistant', content: text };
                    return { answer: { ...context.answer!, text, toolCalls }, messages: [...context.messages, assistant] };
                  }),
                ],
              },
            ],
            onError: { target: '#turn.sending', actions: 'failStage' },
          },
        },
        deciding: {
          always: [
            {
              guard: ({ context }) => (context.answer?.toolCalls.length ?? 0) === 0,
              target: 'beforeOutput',
              actions: assign({ outcome: 'answered', stage: ({ context }) => ({ ...context.stage, output: context.answer?.text ?? '' }) }),
            },
            { target: 'runningTools' },
          ],
        },
        runningTools: {
          entry: assign({ phase: 'tools' }),
          invoke: {
            src: 'toolBatch',
            input: ({ context }) => ({
              input: context.stage.input,
              calls: context.answer?.toolCalls ?? [],
              tools: context.tools,
              handlers: context.handlers,
              stageTimeoutMs: context.stageTimeoutMs,
            }),
            onDone: [
              {
                guard: ({ event }) => event.output.response !== null,
                target: '#turn.sending',
                actions: [
                  'recordBatch',
                  assign(({ event }) => ({ outcome: 'short_circuited' as const, reply: event.output.response ?? '' })),
                ],
              },
              {
                guard: ({ event }) => event.output.allDenied,
                target: 'beforeOutput',
                actions: [
                  'recordBatch',
                  assign(({ context, event }) => ({
                    outcome: 'denied' as const,
                    stage: { ...context.stage, output: deniedReply(context, event.output) },
                  })),
                ],
              },
              {
                // Guards run before recordBatch counts this batch, hence the + 1.
                guard: ({ context }) => context.rounds + 1 >= context.maxRounds,
                target: 'beforeOutput',
                actions: [
                  'recordBatch',
                  assign(({ context }) => ({
                    outcome: 'round_limit' as const,
                    stage: { ...context.stage, output: roundLimitReply(context) },
                  })),
                ],
              },
              { target: 'callingLlm', actions: 'recordBatch' },
            ],
            onError: { target: '#turn.sending', actions: 'failStage' },
          },
        },
        beforeOutput: {
          entry: assign({ phase: 'before_output' }),
          invoke: {
            src: 'stage',
            input: ({ context }) => stageInputOf(context, 'before_output'),
            onDone: [
              { guard: 'shortCircuited', target: '#turn.sending', actions: ['recordStage', 'answerFromStage'] },
              { target: '#turn.sending', actions: ['recordStage', assign({ reply: ({ context }) => context.stage.output ?? '' })] },
            ],
            onError: { target: '#turn.sending', actions: 'failStage' },
          },
        },
      },
    },
    sending: {
      entry: enqueueActions(({ context, enqueue }) => enqueue.emit({ type: 'OutputSent', data: { text: context.reply } })),
      always: 'afterOutput',
    },
    afterOutput: {
      invoke: {
        src: 'stage',
        input: ({ context }) => stageInputOf(context, 'after_output', { output: context.reply }),
        onDone: { target: 'done', actions: enqueueActions(({ event, enqueue }) => enqueue.emit(stageRan(event.output))) },
        // after_output is read-only: a failure there cannot change what was already sent.
        onError: { target: 'done' },
      },
    },
    done: {
      type: 'final',
      entry: enqueueActions(({ context, enqueue }) =>
        enqueue.emit({ type: 'TurnCompleted', data: { outcome: context.outcome ?? 'answered', rounds: context.rounds } }),
      ),
    },
  },
  output: ({ context }) => ({
    outcome: context.outcome ?? 'answered',
    reply: context.reply,
    rounds: context.rounds,
    messages: context.messages,
  }),
});

export type TurnActorRef = ActorRefFrom<typeof turnMachine>;
