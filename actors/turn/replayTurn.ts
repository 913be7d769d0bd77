/**
 * Replays a recorded turn without calling the model: the same machine gets the recorded
 * request and, for each LLM round, the recorded answer; the facts it emits must equal the
 * recorded facts byte for byte. The first difference is reported with its seq, the expected
 * and the actual fact; a round the log has no answer for is a divergence too.
 */
import { createActor, fromPromise, toPromise } from 'xstate';
import { TURN_INPUT_TYPES, type EventStore } from '../../events/index.ts';
import {
  channelTools,
  provideTurn,
  type OutputChannel,
  type LlmAnswer,
  type LlmCall,
  type ToolInvocation,
  type ToolResult,
  type TurnFact,
  type TurnMessage,
  type RegisteredTool,
  type StageHandlers,
} from '../../machines/turn/index.ts';
import { turnMessages } from './runTurn.ts';
import type { HandlerInput, HandlerResolution } from '../../machines/stagePipeline/index.ts';
import { firstDifference, type ReplayDivergence } from '../journal/replayJournal.ts';

type Recorded = { round: number; answer?: LlmAnswer; error?: string };

class MissingRecording extends Error {}

export const replayTurn = async (store: EventStore, stream: string): Promise<ReplayDivergence | null> => {
  const events = await store.readStream(stream);
  const request = events[0];
  if (request?.type !== 'TurnRequested') {
    return {
      seq: request?.seq ?? 0,
      expected: { type: 'TurnRequested', data: null },
      actual: request ? { type: request.type, data: request.data } : null,
    };
  }
  const { input, maxRounds, systemPrompt, history, channels, tools, handlers } = request.data as {
    input: string;
    maxRounds: number;
    systemPrompt?: string;
    history?: TurnMessage[];
    channels?: OutputChannel[];
    tools?: RegisteredTool[];
    handlers?: StageHandlers;
  };
  const handlerResults = new Map<string, { change?: HandlerResolution; error?: string }>(
    events
      .filter((e) => e.type === 'HandlerResultRecorded')
      .map((e) => {
        const { handlerId, stage, occurrence, change, error } = e.data as {
          handlerId: string;
          stage: string;
          occurrence: number;
          change?: HandlerResolution;
          error?: string;
        };
        return [`${handlerId}|${stage}|${occurrence}`, { change, error }] as const;
      }),
  );
  const occurrences = new Map<string, number>();
  // A handler with no recorded result timed out when it ran: it does not answer now either.
  const handler = fromPromise<HandlerResolution, HandlerInput>(({ input: call }) => {
    const key = `${call.handlerId}|${call.stage}`;
    const occurrence = occurrences.get(key) ?? 0;
    occurrences.set(key, occurrence + 1);
    const recorded = handlerResults.get(`${key}|${occurrence}`);
    if (!recorded) return new Promise<HandlerResolution>(() => undefined);
    return recorded.error !== undefined ? Promise.reject(new Error(recorded.error)) : Promise.resolve(recorded.change ?? null);
  });
  const answers = events.filter((e) => e.type === 'LlmAnswerRecorded').map((e) => e.data as Recorded);
  const toolResults = new Map(
    events
      .filter((e) => e.type === 'ToolResultRecorded')
      .map((e) => {
        const { callId, content, isError } = e.data as { callId: string; content: string; isError?: boolean };
        return [callId, { content, ...(isError ? { isError } : {}) }] as const;
      }),
  );
  const tool = fromPromise<ToolResult, ToolInvocation>(async ({ input: call }) => {
    const recorded = toolResults.get(call.callId);
    if (!recorded) throw new MissingRecording(`the log holds no result for tool call ${call.callId} (${call.name})`);
    return recorded;
  });
  const recordedFacts = events.filter((e) => !(TURN_INPUT_TYPES as readonly string[]).includes(e.type));
  let round = 0;
  const llm = fromPromise<LlmAnswer, LlmCall>(async () => {
    const thisRound = round++;
    const recorded = answers.find((a) => a.round === thisRound);
    if (!recorded) throw new MissingRecording(`the log holds no LLM answer for round ${thisRound}`);
    if (recorded.error !== undefined) throw new Error(recorded.error);
    return recorded.answer!;
  });
  const emitted: TurnFact[] = [];
  const actor = createActor(provideTurn({ llm, tool, handler }), {
    input: {
      input,
      messages: turnMessages(systemPrompt, history),
      tools: [...channelTools(channels ?? []), ...(tools ?? [])],
      ...(handlers ? { handlers } : {}),
      maxRounds,
    },
  });
  actor.on('*', (fact: TurnFact) => emitted.push(fact));
  actor.start();
  await toPromise(actor).catch(() => undefined);
  return firstDifference(recordedFacts, emitted);
};

/** Every turn stream in the log, oldest first. */
export const turnStreams = async (store: EventStore): Promise<string[]> =>
  (await store.readAll({ types: ['TurnRequested'] })).map((e) => e.stream);
