/**
 * One tool call's way through a batch, as a pure step: before_toolcall → the tool → after_toolcall.
 * Each step takes what a child settled with and says what the call became and which child to
 * start next. Facts are kept per call, so a batch reports them in call order, never completion order.
 */
import { createStageContext, type StagePipelineInput, type StagePipelineOutput, type ToolCall } from '../stagePipeline/index.ts';
import type { RegisteredTool } from './toolRegistry.ts';
import type { LlmToolCall, StageHandlers, ToolInvocation, ToolResult, TurnFact, TurnMessage } from './turnTypes.ts';

export type CallPhase = 'before' | 'running' | 'after' | 'done';

export type CallState = Readonly<{
  call: ToolCall;
  owner: string | null;
  phase: CallPhase;
  denied: boolean;
  /** The text the model will see. */
  result: string;
  /** A handler answered in a tool stage: the turn short-circuits with this. */
  response: string | null;
  facts: readonly TurnFact[];
}>;

export type BatchSettings = Readonly<{ input: string; calls: readonly ToolCall[]; handlers: StageHandlers; stageTimeoutMs: number }>;

/** The next child to start for a call. */
export type NextChild =
  | Readonly<{ src: 'stage'; id: string; input: StagePipelineInput }>
  | Readonly<{ src: 'tool'; id: string; input: ToolInvocation }>;

export type Step = Readonly<{ state: CallState; next: NextChild | null }>;

export type Settled = Readonly<{ ok: true; output: unknown }> | Readonly<{ ok: false; error: string }>;

export const childId = (kind: 'before' | 'tool' | 'after', index: number): string => `${kind}-${index}`;

export const toStageCall = (call: LlmToolCall): ToolCall => ({ id: call.id, name: call.name, args: call.arguments });

const stageInput = (
  settings: BatchSettings,
  stage: 'before_toolcall' | 'after_toolcall',
  state: CallState,
  toolResult: string | null,
): StagePipelineInput => ({
  stage,
  context: createStageContext(settings.input, { toolCalls: settings.calls, toolCall: state.call, toolResult }),
  handlers: settings.handlers[stage] ?? [],
  timeoutMs: settings.stageTimeoutMs,
  scope: { toolName: state.call.name, ownerPlugin: state.owner ?? '' },
});

const ran = (output: StagePipelineOutput, callId: string): TurnFact => ({
  type: 'StageRan',
  data: { stage: output.stage, shortCircuit: output.shortCircuit, callId, outcomes: output.outcomes },
});

const done = (state: CallState, result: string, facts: readonly TurnFact[], extra: Partial<CallState> = {}): Step => ({
  state: { ...state, ...extra, phase: 'done', result, facts: [...state.facts, ...facts] },
  next: null,
});

/** A call's first step: an unknown tool ends at once with an error result; a known one goes to before_toolcall. */
export const startCall = (settings: BatchSettings, index: number, tools: readonly RegisteredTool[]): Step => {
  const call = settings.calls[index]!;
  const owner = tools.find((t) => t.name === call.name)?.owner ?? null;
  const state: CallState = { call, owner, phase: 'before', denied: false, result: '', response: null, facts: [] };
  if (owner === null) {
    const error = `unknown tool '${call.name}' (known: ${tools.map((t) => t.name).join(', ') || 'none'})`;
    return done(state, `Error: ${error}`, [
      { type: 'ToolCompleted', data: { callId: call.id, name: call.name, result: `Error: ${error}`, error } },
    ]);
  }
  return { state, next: { src: 'stage', id: childId('before', index), input: stageInput(settings, 'before_toolcall', state, null) } };
};

const afterBefore = (_settings: BatchSettings, index: number, state: CallState, settled: Settled): Step => {
  const { id, name } = state.call;
  if (!settled.ok) return done(state, `Error: before_toolcall failed, the call did not run: ${settled.error}`, []);
  const output = settled.output as StagePipelineOutput;
  const facts: TurnFact[] = [ran(output, id)];
  if (output.shortCircuit)
    return done(state, 'Not run: a before_toolcall handler answered the turn.', facts, { response: output.context.response ?? '' });
  const denial = output.context.denial;
  if (denial) {
    facts.push({ type: 'ToolCallDenied', data: { callId: id, name, handlerId: denial.handlerId, reason: denial.reason } });
    return done(state, `Tool call denied: ${denial.reason}`, facts, { denied: true });
  }
  const call = output.context.toolCall ?? state.call;
  if (JSON.stringify(call.args) !== JSON.stringify(state.call.args)) {
    facts.push({ type: 'ToolCallRewritten', data: { callId: id, name, from: { ...state.call.args }, to: { ...call.args } } });
  }
  const owner = state.owner!;
  facts.push({ type: 'ToolCalled', data: { callId: id, name, owner, args: { ...call.args } } });
  const next = { ...state, call, phase: 'running' as const, facts: [...state.facts, ...facts] };
  return { state: next, next: { src: 'tool', id: childId('tool', index), input: { callId: id, name, owner, args: call.args } } };
};

const afterTool = (settings: BatchSettings, index: number, state: CallState, settled: Settled): Step => {
  const { id, name } = state.call;
  let result: string;
  let error: string | undefined;
  if (settled.ok) {
    const output = settled.output as ToolResult;
    result = output.content;
    if (output.isError) error = output.content;
  } else {
    error = settled.error;
    result = `Error: tool '${name}' failed: ${error}`;
  }
  const fact: TurnFact = {
    type: 'ToolCompleted',
    data: error === undefined ? { callId: id, name, result } : { callId: id, name, result, error },
  };
  const next: CallState = { ...state, phase: 'after', result, facts: [...state.facts, fact] };
  return { state: next, next: { src: 'stage', id: childId('after', index), input: stageInput(settings, 'after_toolcall', next, result) } };
};

const afterAfter = (state: CallState, settled: Settled): Step => {
  // Fail closed: a result whose after_toolcall did not finish may still hold what a handler would redact.
  if (!settled.ok) return done(state, `Error: after_toolcall failed, the result is withheld: ${settled.error}`, []);
  const output = settled.output as StagePipelineOutput;
  const response = output.shortCircuit ? (output.context.response ?? '') : null;
  return done(state, output.context.toolResult ?? state.result, [ran(output, state.call.id)], { response });
};

/** Advances a call by what its current child settled with. */
export const stepCall = (settings: BatchSettings, index: number, state: CallState, settled: Settled): Step => {
  switch (state.phase) {
    case 'before':
      return afterBefore(settings, index, state, settled);
    case 'running':
      return afterTool(settings, index, state, settled);
    case 'after':
      return afterAfter(state, settled);
    case 'done':
      return { state, next: null };
    default: {
      const unhandled: never = state.phase;
      throw new Error(`tool batch: unknown call phase ${String(unhandled)}`);
    }
  }
};

/** The tool message a call leaves in the conversation. */
export const toolMessage = (state: CallState): TurnMessage => ({ role: 'tool', toolCallId: state.call.id, content: state.result });
