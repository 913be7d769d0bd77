/**
 * What the facts of a whole turn must say, read against the messages that caused them: one
 * output and one completion, last; rounds that count up within the limit and record the
 * conversation without gaps; tools called only as the toolset and the handlers allow; stage
 * runs that ask exactly the handlers that apply; an output whose kind says what happened; and
 * a user who receives the model's words exactly once.
 */
import { expect } from 'vitest';
import type { HandlerOutcome, Recorded, StageName } from '../../events/index.ts';
import { emptyOutputState, foldOutput } from '../../actors/output/outputDeliveries.ts';
import { ALIAS } from '../../machines/security/index.ts';
import { channelTools, type OutputKind, type Toolset, type TurnFact, type TurnOutcome } from '../../machines/turn/index.ts';
import type { JournalEntry } from './turnDriver.ts';
import { REFUSED_PATHS, type TurnRequestSpec } from './turnArbitraries.ts';

type Of<T extends TurnFact['type']> = Extract<TurnFact, { type: T }>;

const OUTCOME_OF: Readonly<Record<OutputKind, TurnOutcome>> = {
  answer: 'answered',
  handler: 'short_circuited',
  denied: 'denied',
  round_limit: 'round_limit',
  failed: 'failed',
  cancelled: 'cancelled',
  preempted: 'cancelled',
};

const TOOL_STAGES: readonly StageName[] = ['before_toolcall', 'after_toolcall'];

/** LLM calls a turn may make: one, then one more per tool round below the limit. */
export const llmCallsAllowed = (maxRounds: number): number => Math.max(1, maxRounds);

/** No post_action or before_output handler is registered: nothing may change the model's text, so it streams. */
export const streams = (toolset: Toolset): boolean => !(toolset.handlers.post_action?.length || toolset.handlers.before_output?.length);

const handlersOf = (toolset: Toolset, stage: StageName) => toolset.handlers[stage] ?? [];

/** Tool name → owner, first registration first, as the turn looks tools up. */
const ownersOf = (toolset: Toolset): Map<string, string> => {
  const owners = new Map<string, string>();
  for (const t of [...channelTools(toolset.channels), ...toolset.tools]) if (!owners.has(t.name)) owners.set(t.name, t.owner);
  return owners;
};

const only = <T extends TurnFact['type']>(facts: readonly TurnFact[], type: T): Of<T>[] => facts.filter((f): f is Of<T> => f.type === type);

export const checkTurn = (toolset: Toolset, request: TurnRequestSpec, journal: readonly JournalEntry[]): void => {
  const facts = journal.flatMap((e) => e.facts);
  checkEnding(facts);
  checkRounds(toolset, request, journal);
  checkTools(toolset, facts);
  checkStageRuns(toolset, facts);
  checkOutputKind(toolset, request, journal);
  checkWhatTheUserReceives(journal);
  checkApprovals(toolset, journal);
  checkProxyVerdicts(toolset, journal);
  checkFills(toolset, journal);
  checkSandbox(toolset, journal);
};

/** With the sandbox known to the turn, no call with a path it refuses as written runs. */
const checkSandbox = (toolset: Toolset, journal: readonly JournalEntry[]): void => {
  if (!toolset.sandbox) return;
  for (const { facts } of journal) {
    for (const called of only(facts, 'ToolCalled')) {
      const access = toolset.tools.find((t) => t.name === called.data.name)?.access;
      if (!access) continue;
      expect(REFUSED_PATHS, `${called.data.callId} (${called.data.name}) ran with a path the sandbox refuses`).not.toContain(
        called.data.args.path,
      );
    }
  }
};

/**
 * With the vault's grants known, a plugin tool call runs only if every secret it names may be
 * filled into it, and the secrets it gets are recorded with the call, in the same append.
 */
const checkFills = (toolset: Toolset, journal: readonly JournalEntry[]): void => {
  const { secrets } = toolset;
  if (!secrets) return;
  const channelNames = new Set(channelTools(toolset.channels).map((t) => t.name));
  /** By call id, what the model's latest answer named by alias in it: the only secrets a call may get. */
  const modelNamed = new Map<string, string[]>();
  const namesIn = (value: unknown): string[] => [...new Set([...JSON.stringify(value).matchAll(ALIAS)].map((m) => m[1]!))].sort();
  for (const { message, junk, facts } of journal) {
    if (message.type === 'LlmAnswerRecorded' && !junk && message.data.answer) {
      for (const c of message.data.answer.toolCalls) modelNamed.set(c.id, namesIn(c.arguments));
    }
    for (const filled of only(facts, 'SecretFilled')) {
      const named = modelNamed.get(filled.data.callId) ?? [];
      for (const secret of filled.data.secrets)
        expect(named, `${secret} filled into ${filled.data.callId}, which the model did not name`).toContain(secret);
    }
    for (const called of only(facts, 'ToolCalled')) {
      const { callId, name, args } = called.data;
      if (channelNames.has(name)) continue;
      const names = namesIn(args);
      const fills = only(facts, 'SecretFilled').filter((f) => f.data.callId === callId);
      if (names.length === 0) {
        expect(fills, `SecretFilled for ${callId}, which names no secret`).toEqual([]);
        continue;
      }
      expect(toolset.secretsRefused, `${callId} ran with secrets for an input that may have none`).toBeUndefined();
      for (const n of names) {
        const grant = secrets.find((g) => g.name === n);
        expect(
          grant?.tools.some((glob) => new RegExp(`^${glob.replace('*', '.*')}$`).test(name)),
          `${n} filled into ${name}`,
        ).toBe(true);
      }
      expect(fills.map((f) => f.data.secrets)).toEqual([names]);
    }
  }
};

/**
 * A call the policy holds always waits for a person (or, when none may wait, is refused), and a
 * waiting call runs only after an approval of its own id and is denied after a refusal; each
 * waiting call has its own id.
 */
const checkApprovals = (toolset: Toolset, journal: readonly JournalEntry[]): void => {
  const held = new Set((toolset.approve ?? []).map((a) => a.name));
  const waiting = new Map<string, string>(); // approval → callId
  const approved = new Set<string>();
  const ids = new Set<string>();
  for (const { message, junk, facts } of journal) {
    if (message.type === 'ApprovalAnswered' && !junk && message.data.approved) approved.add(waiting.get(message.data.approval) ?? '');
    for (const f of facts) {
      if (f.type === 'LlmRequested') approved.clear();
      if (f.type === 'ApprovalRequested') {
        expect(toolset.approvalsRefused, `${f.data.callId} waits for approval though no call of this turn may`).toBeUndefined();
        expect(ids.has(f.data.approval), `approval id ${f.data.approval} given twice`).toBe(false);
        ids.add(f.data.approval);
        waiting.set(f.data.approval, f.data.callId);
      }
      if (f.type === 'ToolCalled' && held.has(f.data.name)) {
        expect(approved.has(f.data.callId), `ToolCalled ${f.data.callId} (${f.data.name}) without an approval`).toBe(true);
      }
    }
  }
};

/**
 * What the proxy recorded with a result is in the facts: refusals, findings, the warning the model
 * reads, and the secrets filled when the turn did not decide them itself (no grants known).
 */
const checkProxyVerdicts = (toolset: Toolset, journal: readonly JournalEntry[]): void => {
  for (const { message, junk, facts } of journal) {
    if (message.type !== 'ToolResultRecorded' || junk) continue;
    const { callId, refused, filled, findings, blocked } = message.data;
    const of = (type: TurnFact['type']) => facts.filter((f) => f.type === type && (f.data as { callId?: string }).callId === callId);
    expect(of('ToolCallRefused').length, `ToolCallRefused for ${callId}`).toBe(refused === undefined ? 0 : 1);
    expect(of('SecretFilled').length, `SecretFilled for ${callId}`).toBe(filled?.length && !toolset.secrets ? 1 : 0);
    const flagged = of('ContentFlagged') as Extract<TurnFact, { type: 'ContentFlagged' }>[];
    expect(flagged.map((f) => f.data.blocked)).toEqual(findings?.length ? [blocked === true] : []);
    const completed = of('ToolCompleted') as Extract<TurnFact, { type: 'ToolCompleted' }>[];
    if (findings?.length && !blocked) expect(completed[0]?.data.result).toContain('[Security review]');
  }
};

/** One OutputSent, then only after_output, then one TurnCompleted, last, whose outcome matches the output's kind. */
const checkEnding = (facts: readonly TurnFact[]): void => {
  const outputs = facts.flatMap((f, i) => (f.type === 'OutputSent' ? [i] : []));
  const completions = facts.flatMap((f, i) => (f.type === 'TurnCompleted' ? [i] : []));
  expect(outputs.length, 'OutputSent at most once').toBeLessThanOrEqual(1);
  expect(completions.length, 'TurnCompleted at most once').toBeLessThanOrEqual(1);
  if (completions.length === 0) return;
  expect(completions[0], 'TurnCompleted is the last fact').toBe(facts.length - 1);
  expect(outputs.length, 'an OutputSent precedes TurnCompleted').toBe(1);
  const after = facts.slice(outputs[0]! + 1, -1);
  for (const f of after) {
    const stage = f.type === 'StageStarted' || f.type === 'StageRan' ? f.data.stage : null;
    expect(stage, `after the output only after_output runs, not ${f.type} ${JSON.stringify(f.data)}`).toBe('after_output');
  }
  const output = facts[outputs[0]!] as Of<'OutputSent'>;
  const completed = facts[completions[0]!] as Of<'TurnCompleted'>;
  expect(completed.data.outcome, `the outcome of a turn whose output is ${output.data.kind}`).toBe(OUTCOME_OF[output.data.kind]);
};

/** Rounds 0, 1, 2 … within the limit, one at a time, each recording exactly the messages the log lacks. */
const checkRounds = (toolset: Toolset, request: TurnRequestSpec, journal: readonly JournalEntry[]): void => {
  const facts = journal.flatMap((e) => e.facts);
  const asked = only(facts, 'LlmRequested').map((f) => f.data);
  expect(
    asked.map((r) => r.round),
    'LlmRequested rounds go up by one from 0',
  ).toEqual(asked.map((_, i) => i));
  expect(asked.length, `LLM calls with maxRounds ${request.maxRounds}`).toBeLessThanOrEqual(llmCallsAllowed(request.maxRounds));
  let from = (request.systemPrompt ? 1 : 0) + request.history.length;
  for (const r of asked) {
    expect(r.stream, `LlmRequested.stream with post_action/before_output handlers: ${!streams(toolset)}`).toBe(streams(toolset));
    expect(r.from, `round ${r.round} records from where the log ends`).toBe(from);
    expect(r.total, `round ${r.round}: total = from + added`).toBe(r.from + r.added.length);
    from = r.total;
  }
  let waiting = false;
  for (const { message, junk, facts: decided } of journal) {
    if (message.type === 'LlmAnswerRecorded' && !junk) waiting = false;
    for (const f of decided) {
      if (f.type === 'LlmRequested') {
        expect(waiting, `round ${f.data.round} asked while the previous call was unanswered`).toBe(false);
        waiting = true;
      }
      if (f.type === 'TurnCancelled' || f.type === 'OutputSent') waiting = false;
    }
  }
  const completed = only(facts, 'TurnCompleted')[0];
  if (completed) expect(completed.data.rounds).toBeLessThanOrEqual(llmCallsAllowed(request.maxRounds));
};

/**
 * Per round: a tool is called only if the toolset holds it (with its owner), once per call id,
 * never when denied, with the arguments a rewrite left.
 */
const checkTools = (toolset: Toolset, facts: readonly TurnFact[]): void => {
  const owners = ownersOf(toolset);
  let denied = new Set<string>();
  let called = new Set<string>();
  let rewritten = new Map<string, unknown>();
  for (const f of facts) {
    switch (f.type) {
      case 'LlmRequested':
        denied = new Set();
        called = new Set();
        rewritten = new Map();
        break;
      case 'ToolCallDenied':
        expect(called.has(f.data.callId), `${f.data.callId} denied after it was called`).toBe(false);
        denied.add(f.data.callId);
        break;
      case 'ToolCallRewritten':
        rewritten.set(f.data.callId, f.data.to);
        break;
      case 'ToolCalled': {
        const { callId, name, owner, args } = f.data;
        expect(owners.get(name), `ToolCalled ${name}: the toolset's owner`).toBe(owner);
        expect(denied.has(callId), `ToolCalled ${callId} after it was denied`).toBe(false);
        expect(called.has(callId), `ToolCalled ${callId} twice in one round`).toBe(false);
        if (rewritten.has(callId)) expect(args, `ToolCalled ${callId} with the rewritten args`).toEqual(rewritten.get(callId));
        called.add(callId);
        break;
      }
      default:
        break;
    }
  }
};

/**
 * A handler's answer jumps to the output (spec: "Setting ctx.Response at any stage jumps to
 * after_output"): once a stage run short-circuited, no tool is called.
 */
export const checkNoToolAfterAnswer = (journal: readonly JournalEntry[]): void => {
  let answeredBy: number | null = null;
  for (const f of journal.flatMap((e) => e.facts)) {
    if (f.type === 'StageRan' && f.data.shortCircuit && answeredBy === null) answeredBy = f.data.run;
    if (f.type === 'ToolCalled') {
      expect(answeredBy, `ToolCalled ${f.data.callId} ${f.data.name} after stage run ${answeredBy} answered the turn`).toBeNull();
    }
  }
};

/**
 * Runs are numbered upwards; a run asks exactly the handlers of its stage that apply (own_tools
 * ones only around their own plugin's tool) and reports every handler of the stage, in order.
 */
const checkStageRuns = (toolset: Toolset, facts: readonly TurnFact[]): void => {
  const owners = ownersOf(toolset);
  const started = new Map<number, Of<'StageStarted'>['data']>();
  const ran = new Set<number>();
  let last = -1;
  // The tool a call id names in this round, from the facts that carry it.
  let names = new Map<string, string>();
  const pendingScopeChecks: { callId: string; plugin: string; run: number }[] = [];
  const settleScopeChecks = () => {
    for (const { callId, plugin, run } of pendingScopeChecks.splice(0)) {
      const name = names.get(callId);
      if (name !== undefined) expect(owners.get(name), `run ${run}: an own_tools handler of ${plugin} asked about ${name}`).toBe(plugin);
    }
  };
  for (const f of facts) {
    if (f.type === 'LlmRequested') {
      settleScopeChecks();
      names = new Map();
    }
    if (f.type === 'ToolCalled' || f.type === 'ToolCallDenied' || f.type === 'ToolCallRewritten' || f.type === 'ToolCompleted') {
      names.set(f.data.callId, f.data.name);
    }
    if (f.type === 'StageStarted') {
      const { run, stage, callId, handlers } = f.data;
      expect(run, 'stage runs are numbered upwards').toBeGreaterThan(last);
      last = run;
      started.set(run, f.data);
      expect(handlers.length, `run ${run} starts with handlers to ask`).toBeGreaterThan(0);
      expect(callId !== undefined, `run ${run} (${stage}) names its call exactly when it is a tool stage`).toBe(
        TOOL_STAGES.includes(stage),
      );
      const registered = handlersOf(toolset, stage);
      for (const id of handlers) {
        const ref = registered.find((h) => h.id === id);
        expect(ref, `run ${run} asks ${id}, a handler of ${stage}`).toBeDefined();
        if (ref?.scope === 'own_tools') {
          expect(TOOL_STAGES, `own_tools handler ${id} asked in ${stage}`).toContain(stage);
          if (callId !== undefined) pendingScopeChecks.push({ callId, plugin: ref.plugin, run });
        }
      }
    }
    if (f.type === 'StageRan') {
      const { run, stage, outcomes } = f.data;
      const start = started.get(run);
      expect(start?.stage, `StageRan ${run} (${stage}) follows its StageStarted`).toBe(stage);
      expect(ran.has(run), `run ${run} ran twice`).toBe(false);
      ran.add(run);
      expect(
        outcomes.map((o) => o.handlerId),
        `run ${run} reports every handler of ${stage}, in order`,
      ).toEqual(handlersOf(toolset, stage).map((h) => h.id));
      expect(
        outcomes.filter((o) => o.status !== 'skipped').map((o) => o.handlerId),
        `run ${run}: the handlers it asked are the ones not skipped`,
      ).toEqual(start?.handlers);
      expect(f.data.shortCircuit, `run ${run} short-circuits exactly when an admitted change answers`).toBe(
        responsesOf(outcomes).length > 0,
      );
    }
  }
  settleScopeChecks();
};

const responsesOf = (outcomes: readonly HandlerOutcome[]): string[] =>
  outcomes.flatMap((o) => (o.status === 'changed' && o.change?.response !== undefined ? [o.change.response] : []));

/** The output's kind says what happened before it: a stop, a handler's answer, a failure, the limit, denials, or the model's answer. */
const checkOutputKind = (toolset: Toolset, request: TurnRequestSpec, journal: readonly JournalEntry[]): void => {
  const at = journal.findIndex((e) => e.facts.some((f) => f.type === 'OutputSent'));
  if (at < 0) return;
  const facts = journal.flatMap((e) => e.facts);
  const outputIndex = facts.findIndex((f) => f.type === 'OutputSent');
  const before = facts.slice(0, outputIndex);
  const { text, kind, streamed } = (facts[outputIndex] as Of<'OutputSent'>).data;

  const stop = journal.slice(0, at + 1).find((e) => e.message.type === 'TurnStopRequested' && !e.junk);
  if (stop?.message.type === 'TurnStopRequested') {
    const { reason } = stop.message.data;
    expect(stop.facts.slice(0, 2), `a ${reason} stop before the output`).toEqual([
      { type: 'TurnCancelled', data: { during: expect.any(String), reason } },
      { type: 'OutputSent', data: { text, kind: reason === 'preempted' ? 'preempted' : 'cancelled', streamed: text !== '' } },
    ]);
    // What it says was sent is checked against what reached the user (checkWhatTheUserReceives).
    if (!streams(toolset)) expect(text, 'a held reply that stopped sent nothing of it').toBe('');
    return;
  }
  expect(['cancelled', 'preempted'], 'a cancelled or preempted output without an accepted stop').not.toContain(kind);

  const shortCircuits = only(before, 'StageRan').filter((f) => f.data.shortCircuit);
  const stageFailed = kind === 'failed' && text.startsWith('The turn failed: a stage could not run');
  if (kind === 'handler') {
    expect(shortCircuits.length, 'a handler output follows a handler response').toBeGreaterThan(0);
    expect(shortCircuits.flatMap((f) => responsesOf(f.data.outcomes))).toContain(text);
  }
  if (shortCircuits.length > 0) expect(kind === 'handler' || stageFailed, `output ${kind} after a handler answered`).toBe(true);

  const llmFailed = only(before, 'LlmFailed')[0];
  if (llmFailed) expect({ kind, text }).toEqual({ kind: 'failed', text: `The model could not answer: ${llmFailed.data.error}` });
  else if (kind === 'failed') expect(stageFailed, `a failed output (${text}) without a failure`).toBe(true);

  const asked = only(before, 'LlmRequested').length;
  if (kind === 'round_limit') {
    expect(asked, 'round_limit only at the limit').toBe(llmCallsAllowed(request.maxRounds));
    const reply = `I stopped after ${asked} tool rounds (the limit is ${request.maxRounds}) without reaching a final answer.`;
    if (!toolset.handlers.before_output?.length) expect(text).toBe(reply);
  }
  const lastRound = before.slice(before.findLastIndex((f) => f.type === 'LlmRequested'));
  if (kind === 'denied') {
    expect(only(lastRound, 'ToolCallDenied').length, 'a denied output follows denials').toBeGreaterThan(0);
    expect(
      lastRound.filter((f) => f.type === 'ToolCalled' || f.type === 'ToolCompleted'),
      'every call of the round was denied',
    ).toEqual([]);
  }
  const answers = journal
    .slice(0, at + 1)
    .flatMap((e) => (e.message.type === 'LlmAnswerRecorded' && !e.junk && e.message.data.answer ? [e.message.data.answer] : []));
  const lastAnswer = answers.at(-1);
  if (kind === 'answer' && streams(toolset)) expect(text, "with no handler on the text, the answer is the model's").toBe(lastAnswer?.text);
  if (streamed) {
    expect(streams(toolset) && (kind === 'answer' || kind === 'denied'), `streamed ${kind} output`).toBe(true);
    expect(text, 'a streamed output is the last answer, as recorded').toBe(lastAnswer?.text);
    expect(text).not.toBe('');
  }
};

const STREAM = 'turn-property';

/** Outputs whose text is the model's words, as far as the user received them. */
const MODEL_WORDS: readonly OutputKind[] = ['answer', 'denied', 'cancelled', 'preempted'];

/**
 * Folds the journal through the output actor: when the reply is the model's words (an answer,
 * the text it gave with calls that were all denied, or as far as it got before a stop), what
 * reaches the user after the last LLM request spells the reply exactly, neither cut nor twice.
 */
const checkWhatTheUserReceives = (journal: readonly JournalEntry[]): void => {
  const output = journal.flatMap((e) => e.facts).find((f): f is Of<'OutputSent'> => f.type === 'OutputSent');
  if (!output || !MODEL_WORDS.includes(output.data.kind)) return;
  const state = emptyOutputState();
  state.streamRoutes.set(STREAM, { channel: 'cli', target: null });
  let seq = 0;
  let received = '';
  const record = ({ type, data }: { type: string; data: unknown }) => {
    seq++;
    const event = {
      seq,
      stream: STREAM,
      version: seq,
      id: `e${seq}`,
      type,
      schemaVersion: 1,
      at: seq,
      causation: null,
      correlation: null,
      data,
    };
    if (type === 'LlmRequested') received = '';
    for (const d of foldOutput(state, event as Recorded)) if (d.kind === 'chunk') received += d.text;
  };
  // Junk is left out: the runtime journals no piece after its answer and no second request.
  for (const { message, junk, facts } of journal) {
    if (!junk) record(message);
    for (const f of facts) record(f);
  }
  expect(received, `what the user received of the ${output.data.kind} reply`).toBe(output.data.text);
};
