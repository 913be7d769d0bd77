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
  channelHelp,
  channelTools,
  channelTypes,
  DEFAULT_MAX_ROUNDS,
  parseChannelTool,
  provideTurn,
  type OutputChannel,
  type LlmAnswer,
  type LlmCall,
  type ToolInvocation,
  type ToolResult,
  type TurnFact,
  type TurnMessage,
  type TurnOutput,
  type RegisteredTool,
  type StageHandlers,
} from '../../machines/turn/index.ts';
import type { HandlerInput, HandlerResolution } from '../../machines/stagePipeline/index.ts';
import type { ProviderChain } from '../llm/providerChain.ts';
import { OutputPump, type OutputDevice, type PumpReport } from '../output/outputPump.ts';

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
  /** Output channels the model may send to, each with the device that delivers it. */
  channels?: readonly ChannelBinding[];
  /** Dropped chunks and missing devices of the output pumps. */
  onPumpReport?: (report: PumpReport) => void;
  /** Tools and stage handlers from plugins, and how to reach them. */
  plugins?: TurnPlugins;
}>;

/** What plugins bring to a turn: their tools and stage handlers, and the calls that reach them. */
export type TurnPlugins = Readonly<{
  tools: readonly RegisteredTool[];
  handlers: StageHandlers;
  callTool(call: ToolInvocation): Promise<ToolResult>;
  runHandler(input: HandlerInput): Promise<HandlerResolution>;
}>;

export type ChannelBinding = Readonly<{ channel: OutputChannel; device: OutputDevice }>;

export type TurnRun = Readonly<{ stream: string; output: TurnOutput }>;

/** The conversation a turn starts from: the system prompt, then the history. */
export const turnMessages = (systemPrompt: string | undefined, history: readonly TurnMessage[] = []): TurnMessage[] => [
  ...(systemPrompt ? [{ role: 'system' as const, content: systemPrompt }] : []),
  ...history,
];

/** No tools or stage handlers come from plugins yet (they arrive with the plugin host): these say so. */
const noToolResult = async (call: ToolInvocation): Promise<ToolResult> => ({
  content: `tool '${call.name}' is not available: no plugin provides it`,
  isError: true,
});
export const noTools = fromPromise<ToolResult, ToolInvocation>(({ input }) => noToolResult(input));

/** output_send__{name} and its _help: the result the model sees, or undefined for other tools. */
const runChannelTool = (
  call: ToolInvocation,
  channels: readonly ChannelBinding[],
  pumps: ReadonlyMap<string, OutputPump>,
): ToolResult | undefined => {
  const parsed = parseChannelTool(call.name);
  const binding = parsed && channels.find((c) => c.channel.name === parsed.channel);
  if (!parsed || !binding) return undefined;
  if (parsed.kind === 'help') return { content: channelHelp(binding.channel) };
  const { payload, type } = call.args as { payload?: unknown; type?: unknown };
  if (typeof payload !== 'string') return { content: 'payload must be a string', isError: true };
  if (typeof type !== 'string' || !channelTypes(binding.channel).includes(type as never)) {
    return {
      content: `type must be one of ${channelTypes(binding.channel).join(', ')} on channel '${binding.channel.name}'`,
      isError: true,
    };
  }
  pumps.get(binding.channel.name)!.push(payload);
  return { content: `sent to '${binding.channel.name}'` };
};
/** A plugin tool's failure (it crashed, timed out) is a result the model sees, not the end of the turn. */
const callPluginTool = async (plugins: TurnPlugins, call: ToolInvocation): Promise<ToolResult> => {
  try {
    return await plugins.callTool(call);
  } catch (error) {
    return { content: `tool '${call.name}' failed: ${(error as Error).message}`, isError: true };
  }
};

export const noHandlers = fromPromise<HandlerResolution, HandlerInput>(async () => null);

export const runTurn = async (options: RunTurnOptions): Promise<TurnRun> => {
  const turnId = randomUUID();
  const stream = `${TURN_STREAM_PREFIX}${turnId}`;
  const { store } = options;
  const maxRounds = options.maxRounds ?? DEFAULT_MAX_ROUNDS;
  await store.append(
    stream,
    [
      {
        type: 'TurnRequested',
        data: {
          turnId,
          input: options.input,
          model: options.model,
          maxRounds,
          ...(options.systemPrompt ? { systemPrompt: options.systemPrompt } : {}),
          ...(options.history?.length ? { history: options.history } : {}),
          ...(options.channels?.length ? { channels: options.channels.map((c) => c.channel) } : {}),
          ...(options.plugins?.tools.length ? { tools: options.plugins.tools } : {}),
          ...(options.plugins && Object.keys(options.plugins.handlers).length ? { handlers: options.plugins.handlers } : {}),
        },
      },
    ],
    {
      expectedVersion: 'no_stream',
    },
  );
  let round = 0;
  const llm = fromPromise<LlmAnswer, LlmCall>(async ({ input, signal }) => {
    const thisRound = round++;
    const linked = AbortSignal.any([signal, ...(options.signal ? [options.signal] : [])]);
    // Each streamed piece is in the log before anyone sees it, in the order it came.
    let committed: Promise<unknown> = Promise.resolve();
    let index = 0;
    const onDelta = (delta: { text?: string }) => {
      const text = delta.text;
      if (!text) return;
      const data = { round: thisRound, index: index++, text };
      committed = committed.then(() => store.append(stream, [{ type: 'LlmChunkRecorded', data }])).then(() => options.onText?.(text));
    };
    try {
      const answer = await options.chain.complete(
        { model: options.model, messages: input.messages, tools: input.tools, stream: true },
        { signal: linked, onDelta },
      );
      await committed;
      const recorded = { text: answer.text, toolCalls: answer.toolCalls, finishReason: answer.finishReason };
      await store.append(stream, [{ type: 'LlmAnswerRecorded', data: { round: thisRound, source: answer.source, answer: recorded } }]);
      return recorded;
    } catch (error) {
      await committed.catch(() => undefined);
      await store.append(stream, [{ type: 'LlmAnswerRecorded', data: { round: thisRound, error: (error as Error).message } }]);
      throw error;
    }
  });
  const channels = options.channels ?? [];
  const pumps = new Map(
    channels.map(({ channel, device }) => [
      channel.name,
      new OutputPump({ channel: channel.name, resolveDevice: () => device, report: (r) => options.onPumpReport?.(r) }),
    ]),
  );
  const plugins = options.plugins;
  const tool = fromPromise<ToolResult, ToolInvocation>(async ({ input: call }) => {
    const result = runChannelTool(call, channels, pumps) ?? (plugins ? await callPluginTool(plugins, call) : await noToolResult(call));
    await store.append(stream, [{ type: 'ToolResultRecorded', data: { callId: call.callId, name: call.name, ...result } }]);
    return result;
  });
  const occurrences = new Map<string, number>();
  const handler = plugins
    ? fromPromise<HandlerResolution, HandlerInput>(async ({ input }) => {
        const key = `${input.handlerId}|${input.stage}`;
        const occurrence = occurrences.get(key) ?? 0;
        occurrences.set(key, occurrence + 1);
        const base = { handlerId: input.handlerId, stage: input.stage, occurrence };
        try {
          const change = (await plugins.runHandler(input)) ?? null;
          await store.append(stream, [{ type: 'HandlerResultRecorded', data: { ...base, change } }]);
          return change;
        } catch (error) {
          await store.append(stream, [{ type: 'HandlerResultRecorded', data: { ...base, error: (error as Error).message } }]);
          throw error;
        }
      })
    : noHandlers;
  const actor = createActor(provideTurn({ llm, tool, handler }), {
    input: {
      input: options.input,
      messages: turnMessages(options.systemPrompt, options.history),
      tools: [...channelTools(channels.map((c) => c.channel)), ...(plugins?.tools ?? [])],
      ...(plugins ? { handlers: plugins.handlers } : {}),
      maxRounds,
    },
  });
  const appends: Promise<unknown>[] = [];
  actor.on('*', (fact: TurnFact) => appends.push(store.append(stream, [fact])));
  options.signal?.addEventListener('abort', () => actor.send({ type: 'STOP' }), { once: true });
  actor.start();
  const output = await toPromise(actor);
  await Promise.all(appends);
  await Promise.all([...pumps.values()].map((pump) => pump.close()));
  return { stream, output };
};
