/**
 * Runs one turn the way the daemon does (a TurnActor journaling into a log) with scripted
 * model, tool and stage-handler fakes, an in-memory log and manual timers: facts, what each fake
 * was asked and the signals it got are collected; nothing waits on the wall clock.
 */
import { replayJournal } from '../../actors/journal/replayJournal.ts';
import {
  InMemoryEventStore,
  SequentialIds,
  TURN_INPUT_TYPES,
  TURN_STREAM_PREFIX,
  VirtualClock,
  createDefaultCatalog,
  type OutputChannel,
  type RegisteredTool,
  type SecurityFinding,
} from '../../events/index.ts';
import type { HandlerInput, HandlerResolution } from '../../machines/stagePipeline/index.ts';
import {
  DEFAULT_MAX_ROUNDS,
  turnMachine,
  type LlmAnswer,
  type LlmCall,
  type LlmToolCall,
  type StageHandlers,
  type ToolInvocation,
  type ToolResult,
  type Toolset,
  type TurnFact,
  type TurnMessage,
  type TurnOutcome,
} from '../../machines/turn/index.ts';
import { TurnActor } from '../../actors/turn/turnActor.ts';
import { createManualTimers } from './manualTimers.ts';

export type TurnScript = {
  /** The model's answer to its n-th call (0-based); `onDelta` streams pieces before it. */
  llm: (call: LlmCall, n: number, signal: AbortSignal, onDelta: (text: string) => void) => LlmAnswer | Promise<LlmAnswer>;
  tool?: (invocation: ToolInvocation, signal: AbortSignal) => ToolResult | Promise<ToolResult>;
  /** A handler's change; handler ids are global, the stage comes in the input. */
  handler?: (input: HandlerInput) => HandlerResolution | Promise<HandlerResolution>;
};

export type TurnSetup = Readonly<{
  input: string;
  /** The conversation before this input (a system prompt may lead it). */
  messages?: readonly TurnMessage[];
  tools?: readonly RegisteredTool[];
  handlers?: StageHandlers;
  channels?: readonly OutputChannel[];
  maxRounds?: number;
  stageTimeoutMs?: number;
  /** Tools the policy refused, and tools whose calls wait for approval (as the runner records them). */
  refused?: Toolset['refused'];
  approve?: Toolset['approve'];
  /** The vault's grants and, for a principal not vouched for, why no secret is filled (as the runner records them). */
  secrets?: Toolset['secrets'];
  secretsRefused?: string;
  /** The sandbox the turn judges paths as written by (as the proxy hands it). */
  sandbox?: Toolset['sandbox'];
  /** How many calls may wait for approval (as the runner records it for a principal not vouched for). */
  approvalsAtMost?: Toolset['approvalsAtMost'];
  /** What content review found in the input (the security proxy's verdict, recorded with it). */
  inputFindings?: readonly SecurityFinding[];
  inputBlocked?: boolean;
  /** Why the input is more than the model's window (the runner's plan says so), or absent. */
  inputTooLong?: string;
}>;

export const answer = (text: string, toolCalls: LlmToolCall[] = []): LlmAnswer => ({
  text,
  toolCalls,
  finishReason: toolCalls.length > 0 ? 'tool_calls' : 'stop',
});

export const call = (id: string, name: string, args: Record<string, unknown> = {}): LlmToolCall => ({ id, name, arguments: args });

export const tool = (name: string, owner = 'files'): RegisteredTool => ({
  name,
  owner,
  origin: 'plugin',
  description: `${name} tool`,
  parameters: { type: 'object' },
});

/** A promise the test settles by hand. */
export const deferred = <T>() => {
  let resolve!: (value: T) => void;
  let reject!: (error: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
};

/** Lets pending promise callbacks, journal appends and the actor's reactions to them run. */
export const flush = async (times = 10): Promise<void> => {
  for (let i = 0; i < times; i++) await new Promise((resolve) => setImmediate(resolve));
};

export type TurnRunOutput = Readonly<{ outcome: TurnOutcome; reply: string; rounds: number; messages: readonly TurnMessage[] }>;

export const runTurn = (setup: TurnSetup, script: TurnScript) => {
  const llmCalls: LlmCall[] = [];
  const llmSignals: AbortSignal[] = [];
  const invocations: ToolInvocation[] = [];
  const toolSignals: AbortSignal[] = [];
  const handled: HandlerInput[] = [];
  const facts: TurnFact[] = [];
  const timers = createManualTimers();
  const clock = new VirtualClock(1_000);
  const store = new InMemoryEventStore(createDefaultCatalog(), clock, new SequentialIds('t'));
  const stream = `${TURN_STREAM_PREFIX}test`;
  const toolset: Toolset = {
    tools: setup.tools ?? [],
    handlers: setup.handlers ?? {},
    channels: setup.channels ?? [],
    ...(setup.refused ? { refused: setup.refused } : {}),
    ...(setup.approve ? { approve: setup.approve } : {}),
    ...(setup.secrets ? { secrets: setup.secrets } : {}),
    ...(setup.secretsRefused !== undefined ? { secretsRefused: setup.secretsRefused } : {}),
    ...(setup.sandbox ? { sandbox: setup.sandbox } : {}),
    ...(setup.approvalsAtMost ? { approvalsAtMost: setup.approvalsAtMost } : {}),
  };
  const turn = new TurnActor({
    store,
    stream,
    toolset,
    clock,
    timers,
    onFacts: (batch) => facts.push(...batch),
    effects: {
      complete: async (request, { signal, onDelta }) => {
        llmCalls.push(structuredClone(request));
        llmSignals.push(signal);
        return script.llm(request, llmCalls.length - 1, signal, onDelta);
      },
      callTool: async (invocation, signal) => {
        invocations.push(invocation);
        toolSignals.push(signal);
        if (!script.tool) throw new Error('no tool scripted');
        return script.tool(invocation, signal);
      },
      runHandler: async (input) => {
        handled.push(input);
        return script.handler ? script.handler(input) : null;
      },
    },
  });
  void turn.start({
    turnId: 'test',
    input: setup.input,
    model: 'test-model',
    maxRounds: setup.maxRounds ?? DEFAULT_MAX_ROUNDS,
    ...(setup.stageTimeoutMs !== undefined ? { stageTimeoutMs: setup.stageTimeoutMs } : {}),
    ...(setup.messages?.length ? { history: [...setup.messages] } : {}),
    toolset: 'test',
    ...(setup.inputFindings ? { inputFindings: [...setup.inputFindings] } : {}),
    ...(setup.inputBlocked ? { inputBlocked: true } : {}),
    ...(setup.inputTooLong ? { inputTooLong: setup.inputTooLong } : {}),
  });
  const output = async (): Promise<TurnRunOutput> => {
    const outcome = await turn.done;
    await turn.settled();
    const sent = facts.find((f): f is Extract<TurnFact, { type: 'OutputSent' }> => f.type === 'OutputSent');
    return { outcome, reply: sent?.data.text ?? '', rounds: turn.state.rounds, messages: turn.state.messages };
  };
  /** Replays the turn's journal with fresh machines (on `withToolset`, say a changed one): the first divergence, or none. */
  const replay = (withToolset: Toolset = toolset) =>
    replayJournal({ store, stream, logic: turnMachine, input: { toolset: withToolset }, inputTypes: TURN_INPUT_TYPES });
  return {
    turn,
    store,
    stream,
    toolset,
    replay,
    timers,
    facts,
    llmCalls,
    llmSignals,
    invocations,
    toolSignals,
    handled,
    output,
    types: () => facts.map((f) => f.type),
    of: <T extends TurnFact['type']>(type: T) => facts.filter((f): f is Extract<TurnFact, { type: T }> => f.type === type),
  };
};
