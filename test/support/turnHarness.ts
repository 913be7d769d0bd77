/** Runs one turn with scripted llm, tool and stage-handler fakes on a simulated clock, collecting facts and what each fake was asked. */
import { SimulatedClock, createActor, fromPromise, toPromise } from 'xstate';
import type { HandlerInput, HandlerResolution } from '../../machines/stagePipeline/index.ts';
import {
  provideTurn,
  type LlmAnswer,
  type LlmCall,
  type LlmToolCall,
  type RegisteredTool,
  type ToolInvocation,
  type ToolResult,
  type TurnFact,
  type TurnInput,
} from '../../machines/turn/index.ts';

export type TurnScript = {
  /** The model's answer to its n-th call (0-based). */
  llm: (call: LlmCall, n: number, signal: AbortSignal) => LlmAnswer | Promise<LlmAnswer>;
  tool?: (invocation: ToolInvocation, signal: AbortSignal) => ToolResult | Promise<ToolResult>;
  /** A handler's change; handler ids are global, the stage comes in the input. */
  handler?: (input: HandlerInput) => HandlerResolution | Promise<HandlerResolution>;
};

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

/** Lets pending promise callbacks and the actors' reactions to them run. */
export const flush = async (times = 5): Promise<void> => {
  for (let i = 0; i < times; i++) await new Promise((resolve) => setImmediate(resolve));
};

export const runTurn = (input: TurnInput, script: TurnScript) => {
  const llmCalls: LlmCall[] = [];
  const llmSignals: AbortSignal[] = [];
  const invocations: ToolInvocation[] = [];
  const toolSignals: AbortSignal[] = [];
  const handled: HandlerInput[] = [];
  const llm = fromPromise<LlmAnswer, LlmCall>(async ({ input: request, signal }) => {
    llmCalls.push(structuredClone(request));
    llmSignals.push(signal);
    return script.llm(request, llmCalls.length - 1, signal);
  });
  const toolLogic = fromPromise<ToolResult, ToolInvocation>(async ({ input: invocation, signal }) => {
    invocations.push(invocation);
    toolSignals.push(signal);
    if (!script.tool) throw new Error('no tool scripted');
    return script.tool(invocation, signal);
  });
  const handler = fromPromise<HandlerResolution, HandlerInput>(async ({ input: handlerInput }) => {
    handled.push(handlerInput);
    return script.handler ? script.handler(handlerInput) : null;
  });
  const clock = new SimulatedClock();
  const actor = createActor(provideTurn({ llm, tool: toolLogic, handler }), { input, clock });
  const facts: TurnFact[] = [];
  actor.on('*', (fact) => facts.push(fact));
  const done = toPromise(actor);
  actor.start();
  return {
    actor,
    clock,
    facts,
    llmCalls,
    llmSignals,
    invocations,
    toolSignals,
    handled,
    output: () => done,
    types: () => facts.map((f) => f.type),
    of: <T extends TurnFact['type']>(type: T) => facts.filter((f): f is Extract<TurnFact, { type: T }> => f.type === type),
  };
};
