/**
 * Decides what a message means for a turn: on_input → pre_action → loop { llm → post_action →
 * tools (before_toolcall → tool → after_toolcall, each call on its own) } → before_output →
 * output → after_output. A stage whose handlers must be asked, an LLM call and a tool call are
 * facts (`StageStarted`, `LlmRequested`, `ToolCalled`): the runtime performs them after the
 * facts are in the log, and their results come back as messages. A stage answer jumps to the
 * output; a stop cancels whatever runs and only after_output still runs. Pure: the same state
 * and message always give the same state and facts, and a message that changes nothing returns
 * the state it was given.
 */
import { messageOf } from '../../events/index.ts';
import { aliasNamesIn, blockedNotice, warningBlock } from '../security/index.ts';
import {
  awaitedHandlers,
  finishStageRun,
  isSettled,
  settleHandler,
  StageInputError,
  startStageRun,
  type StageContext,
  type StageName,
  type StagePipelineOutput,
  type ToolCall,
  type ToolScope,
} from '../stagePipeline/index.ts';
import { answerApproval, callOutcome, NOT_RUN_AFTER_ANSWER, sameArgs, startCall, toolMessage, type ApprovalAsk } from './toolCalls.ts';
import type { CallState, OpenRun, RunOwner, TurnPhase, TurnState } from './turnState.ts';
import {
  DEFAULT_STAGE_TIMEOUT_MS,
  type LlmToolCall,
  type OutputKind,
  type TurnFact,
  type TurnInputMessage,
  type Toolset,
  type TurnOutcome,
  type TurnMessage,
} from './turnTypes.ts';

type Decision = { state: TurnState; facts: TurnFact[] };

const set = (d: Decision, change: Partial<TurnState>): void => {
  d.state = { ...d.state, ...change };
};

const roundLimitReply = (s: TurnState): string =>
  `I stopped after ${s.rounds} tool rounds (the limit is ${s.request?.maxRounds}) without reaching a final answer.`;

/** The model's own words when it said something (as recorded: they may have streamed already), else why nothing ran. */
const deniedReply = (s: TurnState, calls: readonly CallState[]): string =>
  s.answer?.text.trim() ? s.answer.text : `I could not go on: every tool call was denied (${calls.map((c) => c.result).join('; ')}).`;

// ── stages ────────────────────────────────────────────────────────────────────────────

/** Starts a stage run; one with no handler to ask finishes at once, without a fact. */
const runStage = (d: Decision, stage: StageName, fields: Partial<StageContext>, owner: RunOwner, scope?: ToolScope): void => {
  const s = d.state;
  let run: ReturnType<typeof startStageRun>;
  try {
    run = startStageRun(s.nextRun, {
      stage,
      context: { ...s.stage, response: null, ...fields },
      handlers: s.toolset.handlers[stage] ?? [],
      timeoutMs: s.request?.stageTimeoutMs ?? DEFAULT_STAGE_TIMEOUT_MS,
      ...(scope ? { scope } : {}),
    });
  } catch (error) {
    if (!(error instanceof StageInputError)) throw error;
    // The output is sent and after_output only hears of it: failing it again would loop.
    if (stage === 'after_output') return complete(d);
    return respond(d, `The turn failed: a stage could not run (${messageOf(error)}).`, 'failed', 'failed');
  }
  set(d, { nextRun: s.nextRun + 1 });
  const awaited = awaitedHandlers(run);
  if (awaited.length === 0) return stageFinished(d, { run, owner });
  const callId = owner.kind === 'call' ? s.calls[owner.index]?.call.id : undefined;
  d.facts.push({ type: 'StageStarted', data: { run: run.run, stage, ...(callId ? { callId } : {}), handlers: awaited.map((h) => h.id) } });
  set(d, { runs: [...d.state.runs, { run, owner }] });
};

const stageFinished = (d: Decision, open: OpenRun): void => {
  const output = finishStageRun(open.run);
  set(d, { runs: d.state.runs.filter((r) => r.run.run !== open.run.run) });
  const asked = output.outcomes.some((o) => o.status !== 'skipped');
  const callId = open.owner.kind === 'call' ? d.state.calls[open.owner.index]?.call.id : undefined;
  if (asked) {
    d.facts.push({
      type: 'StageRan',
      data: {
        run: open.run.run,
        stage: output.stage,
        shortCircuit: output.shortCircuit,
        ...(callId ? { callId } : {}),
        outcomes: output.outcomes,
      },
    });
  }
  if (open.owner.kind === 'turn') afterTurnStage(d, output);
  else afterCallStage(d, open.owner.index, open.owner.side, output);
};

/** The stage context the next stage starts from: what this one left, without its answer. */
const keep = (d: Decision, output: StagePipelineOutput): void => set(d, { stage: { ...output.context, response: d.state.stage.response } });

const afterTurnStage = (d: Decision, output: StagePipelineOutput): void => {
  const answer = output.shortCircuit ? (output.context.response ?? '') : null;
  switch (output.stage) {
    case 'on_input':
      keep(d, output);
      if (answer !== null) return respond(d, answer, 'handler', 'short_circuited');
      set(d, { phase: 'pre_action' });
      return runStage(d, 'pre_action', {}, { kind: 'turn' });
    case 'pre_action': {
      keep(d, output);
      if (answer !== null) return respond(d, answer, 'handler', 'short_circuited');
      const { stage } = d.state;
      const added: TurnMessage[] = [
        ...stage.injected.map((content): TurnMessage => ({ role: 'system', content })),
        ...(d.state.inputWarning ? [{ role: 'system' as const, content: d.state.inputWarning }] : []),
        { role: 'user', content: stage.input },
      ];
      set(d, { messages: [...d.state.messages, ...added] });
      return callLlm(d);
    }
    case 'post_action': {
      keep(d, output);
      if (answer !== null) return respond(d, answer, 'handler', 'short_circuited');
      const { stage } = d.state;
      const toolCalls = stage.toolCalls.map((c) => ({ id: c.id, name: c.name, arguments: { ...c.args } }));
      const text = stage.llmText ?? '';
      const assistant: TurnMessage =
        toolCalls.length > 0 ? { role: 'assistant', content: text, toolCalls } : { role: 'assistant', content: text };
      // What the model's own calls named, before a post_action handler changed them.
      const modelCalls = d.state.answer!.toolCalls;
      const named = namedByModel(modelCalls);
      set(d, { answer: { ...d.state.answer!, text, toolCalls }, messages: [...d.state.messages, assistant] });
      if (toolCalls.length === 0) return beforeOutput(d, text, 'answer', 'answered');
      return startBatch(d, named, madeByHandlers(modelCalls, stage.toolCalls, output.context.callsChangedBy ?? []));
    }
    case 'before_output': {
      keep(d, output);
      if (answer !== null) return respond(d, answer, 'handler', 'short_circuited');
      return send(d, { text: d.state.stage.output ?? '', kind: d.state.output!.kind });
    }
    case 'after_output':
      return complete(d);
    default:
      throw new Error(`turn: no turn stage '${output.stage}'`);
  }
};

// ── the model ─────────────────────────────────────────────────────────────────────────

const callLlm = (d: Decision): void => {
  const s = d.state;
  d.facts.push({
    type: 'LlmRequested',
    data: {
      round: s.rounds,
      from: s.recordedCount,
      added: s.messages.slice(s.recordedCount),
      total: s.messages.length,
      stream: s.streaming,
    },
  });
  set(d, { phase: 'llm', recordedCount: s.messages.length, streamed: '' });
};

const answered = (d: Decision, message: Extract<TurnInputMessage, { type: 'LlmAnswerRecorded' }>): void => {
  const { round, answer, error } = message.data;
  if (d.state.phase !== 'llm' || round !== d.state.rounds) return;
  if (!answer) {
    const why = error ?? 'the model gave no answer';
    d.facts.push({ type: 'LlmFailed', data: { round, error: why } });
    return respond(d, `The model could not answer: ${why}`, 'failed', 'failed');
  }
  set(d, { answer, phase: 'post_action' });
  runStage(
    d,
    'post_action',
    { llmText: answer.text, toolCalls: answer.toolCalls.map((c) => ({ id: c.id, name: c.name, args: c.arguments })) },
    { kind: 'turn' },
  );
};

// ── tools ─────────────────────────────────────────────────────────────────────────────

/** The secrets each of the model's calls names by alias, by call id. */
const namedByModel = (calls: readonly LlmToolCall[]): ReadonlyMap<string, readonly string[]> =>
  new Map(calls.map((c) => [c.id, aliasNamesIn(c.arguments)]));

/** The calls a post_action handler added or put in place of the model's (by id), with how and by which handlers. */
const madeByHandlers = (
  modelCalls: readonly LlmToolCall[],
  calls: readonly ToolCall[],
  handlers: readonly string[],
): ReadonlyMap<string, NonNullable<CallState['madeBy']>> => {
  const made = new Map<string, NonNullable<CallState['madeBy']>>();
  if (handlers.length === 0) return made;
  for (const call of calls) {
    const own = modelCalls.find((c) => c.id === call.id);
    if (!own) made.set(call.id, { how: 'added', handlers });
    else if (own.name !== call.name || !sameArgs(own.arguments, call.args)) made.set(call.id, { how: 'replaced', handlers });
  }
  return made;
};

const startBatch = (
  d: Decision,
  named: ReadonlyMap<string, readonly string[]>,
  made: ReadonlyMap<string, NonNullable<CallState['madeBy']>> = new Map(),
): void => {
  const { stage, tools } = d.state;
  const started = stage.toolCalls.map((call) => {
    const step = startCall(call, tools, d.state.toolset.refused, named.get(call.id) ?? []);
    const madeBy = made.get(call.id);
    return madeBy ? { ...step, state: { ...step.state, madeBy } } : step;
  });
  set(d, { phase: 'tools', calls: started.map((s) => s.state) });
  for (let index = 0; index < started.length && d.state.phase === 'tools'; index++) {
    d.facts.push(...started[index]!.facts);
    if (d.state.calls[index]!.phase === 'before') runCallStage(d, index, 'before_toolcall', null);
  }
  finishBatchIfDone(d);
};

const runCallStage = (d: Decision, index: number, stage: 'before_toolcall' | 'after_toolcall', toolResult: string | null): void => {
  const { call, owner } = d.state.calls[index]!;
  runStage(
    d,
    stage,
    { toolCalls: d.state.stage.toolCalls, toolCall: call, toolResult },
    { kind: 'call', index, side: stage === 'before_toolcall' ? 'before' : 'after' },
    { toolName: call.name, ownerPlugin: owner ?? '' },
  );
};

const updateCall = (d: Decision, index: number, change: Partial<CallState>): void =>
  set(d, { calls: d.state.calls.map((c, i) => (i === index ? { ...c, ...change } : c)) });

const afterCallStage = (d: Decision, index: number, side: 'before' | 'after', output: StagePipelineOutput): void => {
  const state = d.state.calls[index]!;
  if (side === 'after') {
    const response = output.shortCircuit ? (output.context.response ?? '') : null;
    updateCall(d, index, { phase: 'done', result: output.context.toolResult ?? state.result, response });
    return finishBatchIfDone(d);
  }
  if (d.state.calls.some((c) => c.response !== null)) {
    // Another call's before_toolcall answered the turn: no tool runs after that answer.
    updateCall(d, index, { phase: 'done', result: NOT_RUN_AFTER_ANSWER });
    return finishBatchIfDone(d);
  }
  const rewrittenBy = rewritingHandlers(state, output);
  const asked = approvalAsk(d.state, index, output.context.approvalAsked ?? null, rewrittenBy);
  const step = callOutcome(state, output, withApprovalsLeft(d.state), asked);
  d.facts.push(...step.facts);
  updateCall(d, index, step.state);
  if (step.state.phase === 'after') return runCallStage(d, index, 'after_toolcall', step.state.result);
  finishBatchIfDone(d);
};

/** The turn's toolset, with no more calls allowed to wait once as many wait as it may have (approvalsAtMost). */
const withApprovalsLeft = (s: TurnState): Toolset => {
  const { approvalsAtMost, approvalsRefused } = s.toolset;
  if (approvalsAtMost === undefined || approvalsRefused !== undefined) return s.toolset;
  const waiting = s.calls.filter((c) => c.phase === 'approval').length;
  return waiting < approvalsAtMost.calls ? s.toolset : { ...s.toolset, approvalsRefused: approvalsAtMost.why };
};

/** The before_toolcall handlers that rewrote the call's arguments, when they did. */
const rewritingHandlers = (state: CallState, output: StagePipelineOutput): readonly string[] => {
  const call = output.context.toolCall;
  if (!call || sameArgs(call.args, state.call.args)) return [];
  return output.context.callsChangedBy ?? [];
};

/**
 * Why a call a stage handler made waits for the person (rules 3 on): a plugin's handler acting with
 * the person's authority on another plugin's tool (reading their files for it, say) is theirs to allow.
 */
const handlerMadeReason = (s: TurnState, call: CallState, rewrittenBy: readonly string[]): string | undefined => {
  if ((s.request?.rules ?? 1) < 3) return undefined;
  const pluginOf = (id: string): string | undefined =>
    Object.values(s.toolset.handlers)
      .flatMap((refs) => refs ?? [])
      .find((h) => h.id === id)?.plugin;
  const others = (ids: readonly string[]) => ids.filter((id) => pluginOf(id) !== call.owner);
  const made = call.madeBy && others(call.madeBy.handlers);
  if (made?.length) {
    const what = call.madeBy!.how === 'added' ? 'added this call' : "put this call in place of the model's";
    return `the post_action handler ${made.join(', ')} ${what}; the model did not ask for it`;
  }
  const rewrote = others(rewrittenBy);
  if (rewrote.length) return `the before_toolcall handler ${rewrote.join(', ')} changed its arguments from what the model asked`;
  return undefined;
};

/**
 * The approval a call must wait for (the toolset's rules ask, a before_toolcall handler did, or a
 * handler of another plugin made the call), with an id the person answers by.
 */
const approvalAsk = (
  s: TurnState,
  index: number,
  asked: Readonly<{ handlerId: string; reason: string }> | null,
  rewrittenBy: readonly string[] = [],
): ApprovalAsk | null => {
  const rule = s.toolset.approve?.find((a) => a.name === s.calls[index]?.call.name);
  const call = s.calls[index];
  const reason = rule?.reason ?? (asked ? `handler ${asked.handlerId}: ${asked.reason}` : call && handlerMadeReason(s, call, rewrittenBy));
  if (reason === undefined || !s.request) return null;
  return { id: `${s.request.turnId.slice(0, 6)}-${s.rounds + 1}.${index + 1}`, reason };
};

const approvalAnswered = (d: Decision, message: Extract<TurnInputMessage, { type: 'ApprovalAnswered' }>): void => {
  if (d.state.phase !== 'tools') return;
  const index = d.state.calls.findIndex((c) => c.phase === 'approval' && c.approval === message.data.approval);
  if (index < 0) return;
  const { findings, blocked } = message.data;
  if (findings?.length)
    d.facts.push({ type: 'ContentFlagged', data: { source: 'input', findings: [...findings], blocked: blocked === true } });
  const step = answerApproval(d.state.calls[index]!, message.data, d.state.toolset);
  d.facts.push(...step.facts);
  // A refusal's reason review flagged reaches the model with the warning beside it, as a message does.
  const warned = findings?.length && !blocked && step.state.denied;
  updateCall(d, index, warned ? { ...step.state, result: `${step.state.result}\n\n${warningBlock(findings, 'input')}` } : step.state);
  if (step.state.phase === 'after') return runCallStage(d, index, 'after_toolcall', step.state.result);
  finishBatchIfDone(d);
};

/** What the proxy decided about a result becomes facts; flagged content reaches the model with a warning beside it. */
const securityFacts = (d: Decision, message: Extract<TurnInputMessage, { type: 'ToolResultRecorded' }>): string => {
  const { callId, name, content, filled, findings, blocked, refused } = message.data;
  if (refused !== undefined) d.facts.push({ type: 'ToolCallRefused', data: { callId, name, reason: refused } });
  // The turn records the fill with the call when it knew the vault's grants; a log from before has it here.
  if (filled?.length && !d.state.toolset.secrets) d.facts.push({ type: 'SecretFilled', data: { callId, name, secrets: [...filled] } });
  if (!findings?.length) return content;
  d.facts.push({ type: 'ContentFlagged', data: { source: 'tool_result', callId, findings: [...findings], blocked: blocked === true } });
  return blocked ? content : `${content}\n\n${warningBlock(findings, 'tool_result')}`;
};

const toolResulted = (d: Decision, message: Extract<TurnInputMessage, { type: 'ToolResultRecorded' }>): void => {
  const { callId, isError } = message.data;
  if (d.state.phase !== 'tools') return;
  const index = d.state.calls.findIndex((c) => c.call.id === callId && c.phase === 'running');
  if (index < 0) return;
  const { call } = d.state.calls[index]!;
  const content = securityFacts(d, message);
  d.facts.push({
    type: 'ToolCompleted',
    data: isError ? { callId, name: call.name, result: content, error: content } : { callId, name: call.name, result: content },
  });
  updateCall(d, index, { phase: 'after', result: content });
  runCallStage(d, index, 'after_toolcall', content);
};

const finishBatchIfDone = (d: Decision): void => {
  // Once a handler answered the turn, a call still waiting for a person will not run: it is closed
  // now, and said so, so that no one is left asked to approve what will not happen.
  if (d.state.calls.some((c) => c.response !== null) && d.state.calls.some((c) => c.phase === 'approval')) {
    for (const c of d.state.calls.filter((c) => c.phase === 'approval')) {
      d.facts.push({
        type: 'ToolCallDenied',
        data: { callId: c.call.id, name: c.call.name, handlerId: 'approval', reason: NOT_RUN_AFTER_ANSWER },
      });
    }
    set(d, {
      calls: d.state.calls.map((c) => (c.phase === 'approval' ? { ...c, phase: 'done' as const, result: NOT_RUN_AFTER_ANSWER } : c)),
    });
  }
  const s = d.state;
  if (s.phase !== 'tools' || !s.calls.every((c) => c.phase === 'done')) return;
  const rounds = s.rounds + 1;
  set(d, { messages: [...s.messages, ...s.calls.map(toolMessage)], rounds, calls: [] });
  const response = s.calls.find((c) => c.response !== null)?.response ?? null;
  if (response !== null) return respond(d, response, 'handler', 'short_circuited');
  if (s.calls.length > 0 && s.calls.every((c) => c.denied)) return beforeOutput(d, deniedReply(s, s.calls), 'denied', 'denied');
  if (rounds >= (s.request?.maxRounds ?? Infinity)) return beforeOutput(d, roundLimitReply(d.state), 'round_limit', 'round_limit');
  callLlm(d);
};

// ── output ────────────────────────────────────────────────────────────────────────────

const beforeOutput = (d: Decision, text: string, kind: OutputKind, outcome: TurnOutcome): void => {
  set(d, { phase: 'before_output', outcome, output: { text, kind }, stage: { ...d.state.stage, output: text } });
  runStage(d, 'before_output', {}, { kind: 'turn' });
};

/** A reply that skips before_output: a handler's answer, a failure, a stop. */
const respond = (d: Decision, text: string, kind: OutputKind, outcome: TurnOutcome): void => {
  set(d, { outcome });
  send(d, { text, kind });
};

/** `streamed`: the text already reached the user as the model's recorded pieces (by default: it is the round's streamed answer). */
const send = (d: Decision, output: NonNullable<TurnState['output']>, streamed = streamedAnswer(d.state, output)): void => {
  d.facts.push({ type: 'OutputSent', data: { ...output, streamed } });
  set(d, { output, phase: 'after_output', runs: [], calls: [] });
  runStage(d, 'after_output', { output: output.text }, { kind: 'turn' });
};

const streamedAnswer = (s: TurnState, output: NonNullable<TurnState['output']>): boolean =>
  s.streaming && output.text !== '' && output.text === s.answer?.text && (output.kind === 'answer' || output.kind === 'denied');

/**
 * What the user already holds of this round's reply, as the output actor delivered it from the
 * log: the round's recorded pieces while the model streams, all of its answer once that is
 * recorded (the pieces are its prefix), nothing when the round is held for a handler.
 */
const alreadySent = (s: TurnState): string => {
  if (!s.streaming || s.phase === 'on_input' || s.phase === 'pre_action') return '';
  if (s.phase === 'llm' || !s.answer) return s.streamed;
  return s.answer.text.startsWith(s.streamed) ? s.answer.text : s.streamed;
};

const complete = (d: Decision): void => {
  d.facts.push({ type: 'TurnCompleted', data: { outcome: d.state.outcome ?? 'answered', rounds: d.state.rounds } });
  set(d, { phase: 'done' });
};

// ── messages ──────────────────────────────────────────────────────────────────────────

const CANCELLABLE: readonly TurnPhase[] = ['on_input', 'pre_action', 'llm', 'post_action', 'tools', 'before_output'];

const stopped = (d: Decision, message: Extract<TurnInputMessage, { type: 'TurnStopRequested' }>): void => {
  const { phase } = d.state;
  if (!CANCELLABLE.includes(phase)) return;
  const { reason } = message.data;
  // The reply stops where it is: its output is what the user was already sent of it, not nothing.
  const sent = (d.state.request?.rules ?? 1) >= 2 ? alreadySent(d.state) : '';
  d.facts.push({ type: 'TurnCancelled', data: { during: phase, reason } });
  set(d, { stopped: reason, runs: [], calls: [], outcome: 'cancelled' });
  send(d, { text: sent, kind: reason === 'preempted' ? 'preempted' : 'cancelled' }, sent !== '');
};

const requested = (d: Decision, message: Extract<TurnInputMessage, { type: 'TurnRequested' }>): void => {
  if (d.state.phase !== 'waiting') return;
  const {
    turnId,
    taskId,
    input,
    model,
    maxRounds,
    stageTimeoutMs,
    systemPrompt,
    history,
    inputFindings,
    inputBlocked,
    inputTooLong,
    rules,
  } = message.data;
  const messages: TurnMessage[] = [...(systemPrompt ? [{ role: 'system' as const, content: systemPrompt }] : []), ...(history ?? [])];
  set(d, {
    phase: 'on_input',
    request: {
      turnId,
      rules: rules ?? 1,
      ...(taskId ? { taskId } : {}),
      input,
      model,
      maxRounds,
      stageTimeoutMs: stageTimeoutMs ?? DEFAULT_STAGE_TIMEOUT_MS,
    },
    stage: { ...d.state.stage, input },
    messages,
    recordedCount: messages.length,
  });
  if (inputTooLong !== undefined) return respond(d, `The message was not sent to the model: ${inputTooLong}.`, 'failed', 'failed');
  if (inputFindings?.length) {
    const blocked = inputBlocked === true;
    d.facts.push({ type: 'ContentFlagged', data: { source: 'input', findings: [...inputFindings], blocked } });
    if (blocked) return respond(d, blockedNotice(inputFindings, 'input'), 'denied', 'denied');
    set(d, { inputWarning: warningBlock(inputFindings, 'input') });
  }
  runStage(d, 'on_input', {}, { kind: 'turn' });
};

const handlerAnswered = (d: Decision, message: Extract<TurnInputMessage, { type: 'HandlerResultRecorded' | 'StageTimedOut' }>): void => {
  const open = d.state.runs.find((r) => r.run.run === message.data.run);
  if (!open) return;
  if (message.type === 'StageTimedOut') return stageFinished(d, open);
  const { handlerId, change, error } = message.data;
  const run = settleHandler(
    open.run,
    handlerId,
    error !== undefined ? { kind: 'rejected', error } : { kind: 'resolved', value: change ?? null },
  );
  if (run === open.run) return;
  const settled = { ...open, run };
  if (isSettled(run)) return stageFinished(d, settled);
  set(d, { runs: d.state.runs.map((r) => (r === open ? settled : r)) });
};

export const decideTurn = (state: TurnState, message: TurnInputMessage): Readonly<{ state: TurnState; facts: TurnFact[] }> => {
  const d: Decision = { state, facts: [] };
  switch (message.type) {
    case 'TurnRequested':
      requested(d, message);
      break;
    case 'LlmChunkRecorded':
      if (state.phase === 'llm' && message.data.round === state.rounds) set(d, { streamed: state.streamed + message.data.text });
      break;
    case 'LlmAnswerRecorded':
      answered(d, message);
      break;
    case 'ToolResultRecorded':
      toolResulted(d, message);
      break;
    case 'HandlerResultRecorded':
    case 'StageTimedOut':
      handlerAnswered(d, message);
      break;
    case 'TurnStopRequested':
      stopped(d, message);
      break;
    case 'ApprovalAnswered':
      approvalAnswered(d, message);
      break;
    default: {
      const unknown: never = message;
      throw new Error(`turn: unknown message ${(unknown as { type: string }).type}`);
    }
  }
  return d;
};
