/**
 * Runs one turn for real: the turn machine with the provider chain as its model, journaled
 * into its own stream. The request is appended first; each LLM answer (or failure) is
 * appended as `LlmAnswerRecorded` before the machine sees it; every fact the machine emits
 * follows in order. Streamed text is handed to `onText` as it arrives.
 */
import { randomUUID } from 'node:crypto';
import { createActor, fromPromise, toPromise } from 'xstate';
import type { EventStore } from '../../events/index.ts';
import { TURN_STREAM_PREFIX } from '../../events/index.ts';
import {
  DEFAULT_MAX_ROUNDS,
  provideTurn,
  type LlmAnswer,
  type LlmCall,
  type ToolInvocation,
  type ToolResult,
  type TurnFact,
  type TurnMessage,
  type TurnOutput,
} from '../../machines/turn/index.ts';
import type { HandlerInput, HandlerResolution } from '../../machines/stagePipeline/index.ts';
import type { ProviderChain } from '../llm/providerChain.ts';

export type RunTurnOptions = Readonly<{
  store: EventStore;
  chain: ProviderChain;
  model: string;
  input: string;
  systemPrompt?: string;
  /** The conversation before this input (until context comes from the memory projections). */
  history?: readonly TurnMessage[];
  maxRounds?: number;
  onText?: (text: string) => void;
  signal?: AbortSignal;
}>;

export type TurnRun = Readonly<{ stream: string; output: TurnOutput }>;

/** The conversation a turn starts from: the system prompt, then the history. */
export const turnMessages = (systemPrompt: string | undefined, history: readonly TurnMessage[] = []): TurnMessage[] => [
  ...(systemPrompt ? [{ role: 'system' as const, content: systemPrompt }] : []),
  ...history,
];

/** No tools or stage handlers are registered yet (they arrive with plugins): these say so. */
export const noTools = fromPromise<ToolResult, ToolInvocation>(async ({ input }) => ({
  content: `tool '${input.name}' is not available: no plugin provides it`,
  isError: true,
}));
export const noHandlers = fromPromise<HandlerResolution, HandlerInput>(async () => null);

export const runTurn = async (options: RunTurnOptions): Promise<TurnRun> => {
  const turnId = randomUUID();
  const stream = `${TURN_STREAM_PREFIX}${turnId}`;
  const { store } = options;
  const maxRounds = options.maxRounds ?? DEFAULT_MAX_ROUNDS;
  await store.append(stream, [
    {
      type: 'TurnRequested',
      data: {
        turnId,
        input: options.input,
        model: options.model,
        maxRounds,
        ...(options.systemPrompt ? { systemPrompt: options.systemPrompt } : {}),
        ...(options.history?.length ? { history: options.history } : {}),
      },
    },
  ], {
    expectedVersion: 'no_stream',
  });
  let round = 0;
  const llm = fromPromise<LlmAnswer, LlmCall>(async ({ input, signal }) => {
    const thisRound = round++;
    const linked = AbortSignal.any([signal, ...(options.signal ? [options.signal] : [])]);
    try {
      const answer = await options.chain.complete(
        { model: options.model, messages: input.messages, tools: input.tools, stream: true },
        { signal: linked, onDelta: (delta) => delta.text && options.onText?.(delta.text) },
      );
      const recorded = { text: answer.text, toolCalls: answer.toolCalls, finishReason: answer.finishReason };
      await store.append(stream, [{ type: 'LlmAnswerRecorded', data: { round: thisRound, source: answer.source, answer: recorded } }]);
      return recorded;
    } catch (error) {
      await store.append(stream, [{ type: 'LlmAnswerRecorded', data: { round: thisRound, error: (error as Error).message } }]);
      throw error;
    }
  });
  const actor = createActor(provideTurn({ llm, tool: noTools, handler: noHandlers }), {
    input: {
      input: options.input,
      messages: turnMessages(options.systemPrompt, options.history),
      maxRounds,
    },
  });
  const appends: Promise<unknown>[] = [];
  actor.on('*', (fact: TurnFact) => appends.push(store.append(stream, [{ type: fact.type, data: fact.data }])));
  options.signal?.addEventListener('abort', () => actor.send({ type: 'STOP' }), { once: true });
  actor.start();
  const output = await toPromise(actor);
  await Promise.all(appends);
  return { stream, output };
};
