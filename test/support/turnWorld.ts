/**
 * A random world for one turn. It reads the turn's facts the way the runtime does: an
 * `LlmRequested` asks the model, a `StageStarted` asks its handlers (and arms a timeout), a
 * `ToolCalled` of a plugin's tool runs it; a cancellation or the output drops whatever is in
 * flight. From that alone (never from the turn's state) it knows what is outstanding, turns a
 * step into the message that answers one such request, and makes junk that answers none.
 */
import type { StageName } from '../../events/index.ts';
import type { TurnFact, TurnInputEvent, TurnStopReason } from '../../machines/turn/index.ts';
import { TEXTS, type CallSpec, type DrainPlan, type HandlerReply, type JunkKind, type ProxyVerdict, type Step } from './turnArbitraries.ts';

type Open = { stage: StageName; handlers: readonly string[]; pending: string[] };
type Message<T extends TurnInputEvent['type']> = Extract<TurnInputEvent, { type: T }>;

const toolCalls = (calls: readonly CallSpec[], prefix: string) =>
  calls.map((c, i) => ({ id: `${prefix}${i}`, name: c.name, args: { ...c.args } }));

/** A change of the kind `stage` admits (after_output admits none). */
const changeFor = (stage: StageName, text: string, calls: readonly CallSpec[]): unknown => {
  switch (stage) {
    case 'on_input':
      return { set: { input: text } };
    case 'pre_action':
      return { inject: [text] };
    case 'post_action':
      return calls.length > 0 ? { set: { toolCalls: toolCalls(calls, 'set_') } } : { set: { llmText: text } };
    case 'before_toolcall':
      return { rewriteArgs: { path: text } };
    case 'after_toolcall':
      return text === 'secret' ? { redact: [{ find: 'secret', replaceWith: '***' }] } : { set: { toolResult: text } };
    case 'before_output':
      return { set: { output: text } };
    case 'after_output':
      return null;
  }
};

const handlerData = (run: number, handlerId: string, stage: StageName, reply: HandlerReply, text: string, calls: readonly CallSpec[]) => {
  switch (reply) {
    case 'nothing':
      return { run, handlerId, change: null };
    case 'change':
      return { run, handlerId, change: changeFor(stage, text, calls) };
    case 'response':
      return { run, handlerId, change: { response: text } };
    case 'deny':
      return { run, handlerId, change: { deny: { reason: text.trim() || 'not allowed' } } };
    case 'ask':
      return { run, handlerId, change: stage === 'before_toolcall' ? { askApproval: { reason: text.trim() || 'look first' } } : null };
    case 'refused':
      return { run, handlerId, change: 42 };
    case 'error':
      return { run, handlerId, error: 'handler crashed' };
  }
};

/** The fields the proxy records with a result for each verdict. */
const verdictOf = (verdict: ProxyVerdict) => {
  switch (verdict) {
    case 'none':
      return {};
    case 'filled':
      return { filled: ['API_KEY'] };
    case 'flagged':
      return { findings: [{ rule: 'injection.instruction' as const, count: 1 }] };
    case 'blocked':
      return { findings: [{ rule: 'injection.hidden_text' as const, count: 2 }], blocked: true };
    case 'refused':
      return { isError: true, refused: 'outside the sandbox' };
  }
};

export class TurnWorld {
  requested = false;
  outputSent = false;
  completed = false;
  private request: Message<'TurnRequested'> | null = null;
  private llmRound: number | null = null;
  private lastRound = -1;
  /** This round's recorded pieces: an answer's text starts with them, as a provider's stream does. */
  private streamed = '';
  private chunks = 0;
  private readonly runs = new Map<number, Open>();
  private readonly finished = new Map<number, readonly string[]>();
  private running: { callId: string; name: string }[] = [];
  /** Calls waiting for a person, by approval id (from ApprovalRequested). */
  private approvals: string[] = [];
  private readonly answeredApprovals: string[] = [];
  /** The call each approval is for. */
  private readonly approvalCalls = new Map<string, string>();
  private readonly doneCalls: string[] = [];

  /** Whether the turn is waiting for anything from the world. */
  outstanding(): boolean {
    return this.llmRound !== null || this.runs.size > 0 || this.running.length > 0 || this.approvals.length > 0;
  }

  /** Whether `message` answers something the turn asked for (else it is junk the turn must ignore). */
  expects(message: TurnInputEvent): boolean {
    switch (message.type) {
      case 'TurnRequested':
        return !this.requested;
      case 'LlmChunkRecorded':
      case 'LlmAnswerRecorded':
        return this.llmRound !== null && message.data.round === this.llmRound;
      case 'ToolResultRecorded':
        return this.running.some((c) => c.callId === message.data.callId);
      case 'HandlerResultRecorded':
        return this.runs.get(message.data.run)?.pending.includes(message.data.handlerId) ?? false;
      case 'StageTimedOut':
        return this.runs.has(message.data.run);
      case 'TurnStopRequested':
        return this.requested && !this.outputSent;
      case 'ApprovalAnswered':
        return this.approvals.includes(message.data.approval);
    }
  }

  /** Takes in a delivered message and the facts the turn decided for it. */
  accept(message: TurnInputEvent, facts: readonly TurnFact[]): void {
    if (this.expects(message)) this.answered(message);
    for (const fact of facts) this.read(fact);
  }

  private answered(message: TurnInputEvent): void {
    switch (message.type) {
      case 'TurnRequested':
        this.requested = true;
        this.request = message;
        return;
      case 'LlmChunkRecorded':
        this.streamed += message.data.text;
        this.chunks++;
        return;
      case 'LlmAnswerRecorded':
        this.llmRound = null;
        return;
      case 'ToolResultRecorded':
        return this.callDone(message.data.callId);
      case 'HandlerResultRecorded': {
        const open = this.runs.get(message.data.run)!;
        open.pending = open.pending.filter((h) => h !== message.data.handlerId);
        return;
      }
      case 'StageTimedOut':
        return this.runDone(message.data.run);
      case 'TurnStopRequested':
        return;
      case 'ApprovalAnswered':
        this.approvals = this.approvals.filter((a) => a !== message.data.approval);
        this.answeredApprovals.push(message.data.approval);
        return;
    }
  }

  private read(fact: TurnFact): void {
    switch (fact.type) {
      case 'LlmRequested':
        this.llmRound = fact.data.round;
        this.lastRound = fact.data.round;
        this.streamed = '';
        this.chunks = 0;
        return;
      case 'StageStarted':
        this.runs.set(fact.data.run, { stage: fact.data.stage, handlers: fact.data.handlers, pending: [...fact.data.handlers] });
        return;
      case 'StageRan':
        return this.runDone(fact.data.run);
      case 'ToolCalled':
        this.running.push({ callId: fact.data.callId, name: fact.data.name });
        return;
      case 'ApprovalRequested':
        this.approvals.push(fact.data.approval);
        this.approvalCalls.set(fact.data.approval, fact.data.callId);
        return;
      case 'ToolCallDenied': {
        // A call that will not run no longer waits for its approval.
        const closed = this.approvals.filter((a) => this.approvalCalls.get(a) === fact.data.callId);
        this.approvals = this.approvals.filter((a) => !closed.includes(a));
        this.answeredApprovals.push(...closed);
        return;
      }
      case 'ToolCompleted':
        return this.callDone(fact.data.callId);
      case 'TurnCancelled':
      case 'OutputSent':
        this.llmRound = null;
        for (const run of [...this.runs.keys()]) this.runDone(run);
        for (const { callId } of [...this.running]) this.callDone(callId);
        this.answeredApprovals.push(...this.approvals);
        this.approvals = [];
        if (fact.type === 'OutputSent') this.outputSent = true;
        return;
      case 'TurnCompleted':
        this.completed = true;
        return;
      default:
        return;
    }
  }

  private runDone(run: number): void {
    const open = this.runs.get(run);
    if (!open) return;
    this.runs.delete(run);
    this.finished.set(run, open.handlers);
  }

  private callDone(callId: string): void {
    const index = this.running.findIndex((c) => c.callId === callId);
    if (index < 0) return;
    this.running.splice(index, 1);
    this.doneCalls.push(callId);
  }

  /** The message `step` stands for now, or undefined when it has nothing to answer. */
  messageFor(step: Step): TurnInputEvent | undefined {
    switch (step.t) {
      case 'answer':
        return this.llmRound === null ? undefined : this.answer(step.text, step.calls);
      case 'fail':
        if (this.llmRound === null) return undefined;
        return { type: 'LlmAnswerRecorded', data: { round: this.llmRound, ...(step.error !== undefined ? { error: step.error } : {}) } };
      case 'chunk':
        if (this.llmRound === null) return undefined;
        return { type: 'LlmChunkRecorded', data: { round: this.llmRound, index: this.chunks, text: step.text } };
      case 'handler': {
        const waiting = [...this.runs].filter(([, open]) => open.pending.length > 0);
        if (waiting.length === 0) return undefined;
        const [run, open] = waiting[step.pick % waiting.length]!;
        const handlerId = open.pending[step.pick % open.pending.length]!;
        return { type: 'HandlerResultRecorded', data: handlerData(run, handlerId, open.stage, step.reply, step.text, step.calls) };
      }
      case 'timeout': {
        const runs = [...this.runs.keys()];
        return runs.length === 0 ? undefined : { type: 'StageTimedOut', data: { run: runs[step.pick % runs.length]! } };
      }
      case 'tool': {
        if (this.running.length === 0) return undefined;
        const { callId, name } = this.running[step.pick % this.running.length]!;
        return {
          type: 'ToolResultRecorded',
          data: { callId, name, content: step.content, ...(step.isError ? { isError: true } : {}), ...verdictOf(step.verdict) },
        };
      }
      case 'approve': {
        if (this.approvals.length === 0) return undefined;
        const approval = this.approvals[step.pick % this.approvals.length]!;
        return { type: 'ApprovalAnswered', data: { approval, approved: step.approved, by: 'owner' } };
      }
      case 'stop':
        return this.stop(step.reason);
      case 'junk':
        return this.junk(step.kind, step.pick);
    }
  }

  stop(reason: TurnStopReason): Message<'TurnStopRequested'> {
    return { type: 'TurnStopRequested', data: { reason } };
  }

  private answer(text: string, calls: readonly CallSpec[]): Message<'LlmAnswerRecorded'> {
    const answer = {
      text: this.streamed + text,
      toolCalls: toolCalls(calls, 'call_').map(({ id, name, args }) => ({ id, name, arguments: args })),
      finishReason: calls.length > 0 ? ('tool_calls' as const) : ('stop' as const),
    };
    return { type: 'LlmAnswerRecorded', data: { round: this.llmRound!, answer } };
  }

  private junk(kind: JunkKind, pick: number): TurnInputEvent {
    switch (kind) {
      case 'round': {
        const rounds = [this.lastRound - 1, this.lastRound, this.lastRound + 1].filter((r) => r !== this.llmRound);
        const round = rounds[pick % rounds.length]!;
        return pick % 2 === 0
          ? { type: 'LlmAnswerRecorded', data: { round, answer: { text: 'stale', toolCalls: [], finishReason: 'stop' } } }
          : { type: 'LlmChunkRecorded', data: { round, index: 0, text: 'stale' } };
      }
      case 'handler': {
        const open = [...this.runs].map(([run, o]) => ({ run, settled: o.handlers.filter((h) => !o.pending.includes(h)) }));
        const candidates = open.flatMap(({ run, settled }) => [...settled, 'ghost/handler'].map((handlerId) => ({ run, handlerId })));
        if (candidates.length === 0) return this.junk('run', pick);
        const { run, handlerId } = candidates[pick % candidates.length]!;
        return { type: 'HandlerResultRecorded', data: { run, handlerId, change: { response: 'late' } } };
      }
      case 'run': {
        const candidates = [...this.finished, [10_000, ['ghost/handler']] as const];
        const [run, handlers] = candidates[pick % candidates.length]!;
        return pick % 2 === 0
          ? { type: 'StageTimedOut', data: { run } }
          : { type: 'HandlerResultRecorded', data: { run, handlerId: handlers[0] ?? 'ghost/handler', change: { response: 'late' } } };
      }
      case 'call': {
        const candidates = [...this.doneCalls, 'ghost-call'].filter((id) => !this.running.some((c) => c.callId === id));
        const callId = candidates[pick % candidates.length]!;
        return { type: 'ToolResultRecorded', data: { callId, name: 'files_read', content: 'late' } };
      }
      case 'request':
        return this.request!;
      case 'approval': {
        const candidates = [...this.answeredApprovals, 'ghost-1.1'].filter((a) => !this.approvals.includes(a));
        return { type: 'ApprovalAnswered', data: { approval: candidates[pick % candidates.length]!, approved: true, by: 'owner' } };
      }
    }
  }

  /** Once the steps ran out: the message that answers the first outstanding request, from the plan (cycled by `n`). */
  drainMessage(plan: DrainPlan, n: number): TurnInputEvent | undefined {
    const of = <T>(list: readonly T[]): T => list[n % list.length]!;
    if (this.llmRound !== null) {
      const { text, calls } = of(plan.answers);
      return this.answer(text, calls);
    }
    const [first] = this.runs;
    if (first) {
      const [run, open] = first;
      if (of(plan.timeouts) || open.pending.length === 0) return { type: 'StageTimedOut', data: { run } };
      return {
        type: 'HandlerResultRecorded',
        data: handlerData(run, open.pending[0]!, open.stage, of(plan.replies), of(TEXTS), of(plan.answers).calls),
      };
    }
    const call = this.running[0];
    if (call) return { type: 'ToolResultRecorded', data: { callId: call.callId, name: call.name, content: of(TEXTS) } };
    const approval = this.approvals[0];
    if (approval) return { type: 'ApprovalAnswered', data: { approval, approved: n % 2 === 0, by: 'owner' } };
    return undefined;
  }
}
