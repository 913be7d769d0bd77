/**
 * One tool call's way through a round, as pure steps: an unknown tool ends at once; a known
 * one passes before_toolcall (which may answer, deny or rewrite it), then runs: a plugin's tool
 * as a `ToolCalled` the runtime performs, an output channel's send or help decided here (the
 * output actor delivers the committed send); then after_toolcall. The tool messages the model
 * sees come out in call order.
 */
import type { OutputChannel } from '../../events/index.ts';
import { aliasNamesIn, aliasOf, decideFill, refusalAsWritten, refusedByFirewall } from '../security/index.ts';
import type { StagePipelineOutput, ToolCall } from '../stagePipeline/index.ts';
import { channelHelp, channelTypes, parseChannelTool } from './outputChannels.ts';
import type { RegisteredTool } from '../../events/index.ts';
import type { CallState } from './turnState.ts';
import type { Toolset, TurnFact, TurnMessage } from './turnTypes.ts';

export type CallStep = Readonly<{ state: CallState; facts: TurnFact[] }>;

/**
 * A call's first step: a tool the security policy refused, or an unknown one, ends at once with an
 * error result saying why; a known one waits for before_toolcall.
 */
export const startCall = (
  call: ToolCall,
  tools: readonly RegisteredTool[],
  refused: readonly Readonly<{ name: string; reason: string }>[] = [],
  named: readonly string[] = [],
): CallStep => {
  const owner = tools.find((t) => t.name === call.name)?.owner ?? null;
  const state: CallState = { call, owner, phase: 'before', denied: false, result: '', response: null, ...(named.length ? { named } : {}) };
  if (owner !== null) return { state, facts: [] };
  const refusal = refused.find((r) => r.name === call.name);
  const error = refusal
    ? `tool '${call.name}' is refused by the security policy: ${refusal.reason}`
    : `unknown tool '${call.name}' (known: ${tools.map((t) => t.name).join(', ') || 'none'})`;
  return {
    state: { ...state, phase: 'done', result: `Error: ${error}` },
    facts: [
      ...(refusal ? [{ type: 'ToolCallRefused' as const, data: { callId: call.id, name: call.name, reason: refusal.reason } }] : []),
      { type: 'ToolCompleted', data: { callId: call.id, name: call.name, result: `Error: ${error}`, error } },
    ],
  };
};

/** What an output channel's tool gives back: the result the model sees, and whether it was sent. */
const channelResult = (call: ToolCall, channels: readonly OutputChannel[]): { content: string; error?: string } | undefined => {
  const parsed = parseChannelTool(call.name);
  const channel = parsed && channels.find((c) => c.name === parsed.channel);
  if (!parsed || !channel) return undefined;
  if (parsed.kind === 'help') return { content: channelHelp(channel) };
  const { payload, type } = call.args as { payload?: unknown; type?: unknown };
  if (typeof payload !== 'string') return { content: 'payload must be a string', error: 'payload must be a string' };
  if (typeof type !== 'string' || !channelTypes(channel).includes(type as never)) {
    const error = `type must be one of ${channelTypes(channel).join(', ')} on channel '${channel.name}'`;
    return { content: error, error };
  }
  return { content: `sent to '${channel.name}'` };
};

/** Whether two calls' arguments are the same (as they are recorded: JSON). */
export const sameArgs = (a: Readonly<Record<string, unknown>>, b: Readonly<Record<string, unknown>>): boolean =>
  JSON.stringify(a) === JSON.stringify(b);

/** The result a call leaves when a before_toolcall handler answered the turn before it ran. */
export const NOT_RUN_AFTER_ANSWER = 'Not run: a before_toolcall handler answered the turn.';

/** A call that waits for a person: its approval's id, and the rule that asks for it. */
export type ApprovalAsk = Readonly<{ id: string; reason: string }>;

/** After before_toolcall: answered, denied, or run (rewritten first if a handler changed its arguments). */
export const callOutcome = (
  state: CallState,
  before: StagePipelineOutput,
  toolset: Toolset,
  approval: ApprovalAsk | null = null,
): CallStep => {
  const { id, name } = state.call;
  if (before.shortCircuit) {
    return {
      state: {
        ...state,
        phase: 'done',
        result: NOT_RUN_AFTER_ANSWER,
        response: before.context.response ?? '',
      },
      facts: [],
    };
  }
  const denial = before.context.denial;
  if (denial) {
    return {
      state: { ...state, phase: 'done', denied: true, result: `Tool call denied: ${denial.reason}` },
      facts: [{ type: 'ToolCallDenied', data: { callId: id, name, handlerId: denial.handlerId, reason: denial.reason } }],
    };
  }
  const call = before.context.toolCall ?? state.call;
  const facts: TurnFact[] = [];
  if (!sameArgs(call.args, state.call.args)) {
    facts.push({ type: 'ToolCallRewritten', data: { callId: id, name, from: { ...state.call.args }, to: { ...call.args } } });
  }
  // A handler is not the owner: a secret is filled in only where the model's own call named it.
  const added = toolset.secrets ? addedAliases(state.named ?? [], call.args) : [];
  if (added.length > 0) {
    const refused = refuseCall(
      { ...state, call },
      `a stage handler added ${added.map(aliasOf).join(', ')} to the call; a secret is filled in only where the model's own call names it`,
    );
    return { state: refused.state, facts: [...facts, ...refused.facts] };
  }
  if (approval && toolset.approvalsRefused) {
    const refused = refuseCall({ ...state, call }, `it needs a person's approval (${approval.reason}), and ${toolset.approvalsRefused}`);
    return { state: refused.state, facts: [...facts, ...refused.facts] };
  }
  if (approval) {
    facts.push({
      type: 'ApprovalRequested',
      data: { approval: approval.id, callId: id, name, args: { ...call.args }, reason: approval.reason },
    });
    return { state: { ...state, call, phase: 'approval', approval: approval.id }, facts };
  }
  const run = runCall({ ...state, call }, toolset);
  return { state: run.state, facts: [...facts, ...run.facts] };
};

/**
 * The call runs now: a plugin's tool as a `ToolCalled` the runtime performs, with the secrets it
 * names filled in (recorded as `SecretFilled` with it, before any leaves) or refused with why; a
 * channel's send or help decided here.
 */
export const runCall = (state: CallState, toolset: Toolset): CallStep => {
  const { call } = state;
  const { id, name } = call;
  const facts: TurnFact[] = [];
  const channel = channelResult(call, toolset.channels);
  if (channel?.error !== undefined) {
    facts.push({ type: 'ToolCompleted', data: { callId: id, name, result: channel.content, error: channel.error } });
    return { state: { ...state, call, phase: 'after', result: channel.content }, facts };
  }
  const refusal = channel ? undefined : firewallRefusal(toolset, call);
  const fill =
    channel || refusal !== undefined || !toolset.secrets ? null : decideFill(toolset.secrets, toolset.secretsRefused, name, call.args);
  const reason = refusal ?? (fill?.kind === 'refuse' ? fill.reason : undefined);
  if (reason !== undefined) return refuseCall(state, reason);
  facts.push({ type: 'ToolCalled', data: { callId: id, name, owner: state.owner!, args: { ...call.args } } });
  if (fill?.kind === 'fill') facts.push({ type: 'SecretFilled', data: { callId: id, name, secrets: [...fill.secrets] } });
  if (channel) {
    facts.push({ type: 'ToolCompleted', data: { callId: id, name, result: channel.content } });
    return { state: { ...state, call, phase: 'after', result: channel.content }, facts };
  }
  return { state: { ...state, call, phase: 'running' }, facts };
};

/** The call refused by the firewall before it runs: the model reads why, and after_toolcall hears of it. */
const refuseCall = (state: CallState, reason: string): CallStep => {
  const { id, name } = state.call;
  const content = refusedByFirewall(reason);
  return {
    state: { ...state, phase: 'after', result: content },
    facts: [
      { type: 'ToolCallRefused', data: { callId: id, name, reason } },
      { type: 'ToolCompleted', data: { callId: id, name, result: content, error: content } },
    ],
  };
};

/** The secrets `args` names by alias that the model's own call did not. */
const addedAliases = (named: readonly string[], args: Readonly<Record<string, unknown>>): string[] =>
  aliasNamesIn(args).filter((name) => !named.includes(name));

/** Why the sandbox refuses a plugin tool's call on its paths as written (before any secret is filled), or undefined. */
const firewallRefusal = (toolset: Toolset, call: ToolCall): string | undefined => {
  if (!toolset.sandbox) return undefined;
  const access = toolset.tools.find((t) => t.name === call.name)?.access;
  return refusalAsWritten(access, call.args, toolset.sandbox);
};

/** A person's answer to the approval a call waits for: it runs, or it is denied with their reason. */
export const answerApproval = (
  state: CallState,
  answer: Readonly<{ approved: boolean; by: string; reason?: string }>,
  toolset: Toolset,
): CallStep => {
  if (answer.approved) return runCall(state, toolset);
  const reason = `${answer.by} refused it${answer.reason ? `: ${answer.reason}` : ''}`;
  const { id, name } = state.call;
  return {
    state: { ...state, phase: 'done', denied: true, result: `Tool call denied: ${reason}` },
    facts: [{ type: 'ToolCallDenied', data: { callId: id, name, handlerId: 'approval', reason } }],
  };
};

/** The tool message a call leaves in the conversation. */
export const toolMessage = (state: CallState): TurnMessage => ({ role: 'tool', toolCallId: state.call.id, content: state.result });
