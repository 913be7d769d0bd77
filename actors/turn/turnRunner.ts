/**
 * Runs a turn for each task the scheduler starts or resumes: the input enters memory once, the
 * turn is built from the conversation, related memory and what plugins offer now, and runs as a
 * TurnActor; when it completes, what the user received enters memory and the task is finished
 * with the turn's outcome. A stop or a preemption is a message to the running turn; a shutdown
 * stops every turn and leaves their tasks to the next start. On start, turns a killed daemon
 * left open are closed as abandoned, and a task the scheduler started before this module was
 * listening is run.
 *
 * A turn whose calls wait for a person's approval is parked: its task ends (the agent goes on
 * with other inputs) and the turn stays open in the log, across restarts. An answer is queued
 * as an input; when the scheduler starts it, the parked turn takes the answer and goes on.
 */
import {
  applyPolicy,
  globsMatchingNoTool,
  blockedNotice,
  INTERNAL,
  isPrivileged,
  OWNER,
  rulesMatchingNoTool,
  secretsNotFilledFor,
  type SecurityPolicy,
  type ToolRules,
} from '../../machines/security/index.ts';
import {
  TURN_INPUT_TYPES,
  TURN_STREAM_PREFIX,
  HologramError,
  closestNames,
  type Clock,
  type EventNamed,
  type EventStore,
  type IdSource,
  type Recorded,
  type SecurityFinding,
  type Timers,
} from '../../events/index.ts';
import { type InputPayload, PERSON_LEVEL, type SchedulerFact } from '../../machines/scheduler/index.ts';
import {
  assembleSystemPrompt,
  channelTools,
  type ApprovalAnswer,
  DEFAULT_MAX_ROUNDS,
  DEFAULT_PERSONA,
  FALLBACK_CONTEXT_WINDOW,
  awaitsApproval,
  offeredChannels,
  offeredTools,
  pendingApprovals,
  planTurnContext,
  runtimeBlock,
  timelineBlock,
  type Toolset,
  type TurnInputMessage,
  type TurnMessage,
  type TurnOutcome,
  type TurnStopReason,
} from '../../machines/turn/index.ts';
import type { LlmFacility } from '../llm/llmFacility.ts';
import type { TurnMemory } from '../memory/turnMemory.ts';
import type { SchedulerFacility } from '../modules/schedulerModule.ts';
import { TurnActor, type TurnActorOptions } from './turnActor.ts';
import { modelEffects, type ToolCallOrigin, type TurnPlugins } from './turnEffects.ts';
import { ToolsetLedger } from './toolsets.ts';

/**
 * The most calls of replies to one plugin's inputs (all its principals together: a plugin declares
 * as many as it likes; one reply may hold many calls) that may wait for approval at once, unless
 * the owner vouched for the principal.
 */
export const MAX_WAITING_CALLS_PER_PLUGIN = 8;

/** The names nearest a misspelt one, as a question, or `otherwise` when none is near. */
const nearest = (closest: readonly string[], otherwise: string): string =>
  closest.length ? `did you mean ${closest.map((name) => `'${name}'`).join(' or ')}?` : otherwise;

/** The plugin a principal speaks for: `qq` of `qq.guest` (a plugin's input without a profile is its name). */
const pluginOfPrincipal = (principal: string): string => principal.split('.')[0]!;

/**
 * The toolset as the security policy lets `principal` use it: refused tools out (recorded as
 * refused), approvals marked, and, for a principal the owner has not vouched for, why its calls
 * get no secret filled in.
 */
const withPolicy = (toolset: Toolset, policy: SecurityPolicy, principal: string, profile: ToolRules | undefined): Toolset => {
  const who = { name: principal, ...(profile ? { profile } : {}) };
  // An output channel's send and help are tools too: a deny, an allow list or an approve names them as any other.
  const plugins = applyPolicy(toolset.tools, policy, who);
  const channels = applyPolicy(channelTools(toolset.channels), policy, who);
  const { tools } = plugins;
  const refused = [...channels.refused, ...plugins.refused];
  const approve = [...channels.approve, ...plugins.approve];
  return {
    ...toolset,
    tools,
    ...(refused.length ? { refused } : {}),
    ...(approve.length ? { approve } : {}),
    ...(toolset.secrets && !isPrivileged(policy, principal) ? { secretsRefused: secretsNotFilledFor(principal) } : {}),
  };
};

export type TurnRunnerOptions = Readonly<{
  store: EventStore;
  scheduler: SchedulerFacility;
  plugins: TurnPlugins;
  llm: LlmFacility;
  /** Who the agent is (settings' llm.systemPrompt or the data dir's persona.md); default DEFAULT_PERSONA. */
  persona?: string;
  /** The IANA time zone of the timeline layer; default UTC. */
  timeZone?: string;
  /** `security` (tools, principals, owners): the tools a turn may offer and run, by who sent its input (deny wins). */
  policy?: SecurityPolicy;
  /** The rules of a plugin-declared principal's profile (from its plugin's manifest). */
  profileOf?: (principal: string) => ToolRules | undefined;
  /** Every principal the plugins declare: a rule for another is said at start (a misspelt one never applies). */
  profiles?: () => readonly string[];
  maxRounds?: number;
  memory: TurnMemory;
  clock: Clock;
  timers: Timers;
  ids: IdSource;
  log: (line: string) => void;
  /** Streams the turns still open (a killed daemon's), for closing them at start. */
  openTurns?: () => Promise<readonly string[]>;
  /** Sees every turn actor's events and snapshots (the web UI's machines view, --inspect). */
  inspect?: TurnActorOptions['inspect'];
}>;

const TASK_OUTCOME: Readonly<Record<TurnOutcome, 'done' | 'failed' | 'cancelled'>> = {
  answered: 'done',
  short_circuited: 'done',
  denied: 'done',
  round_limit: 'done',
  cancelled: 'cancelled',
  failed: 'failed',
};

/**
 * A task's run, registered when the task starts or resumes: its turn exists only once the
 * launch (memory, recall, toolset) is done, and a stop that comes before then is sent as soon
 * as it does.
 */
type Running = {
  /** The task the turn runs under now: its input's, or, once an approval resumed it, the answer's. */
  taskId: string;
  /** The input the turn answers (the task it started under): what its sender's cancel names. */
  input: string;
  turn: TurnActor | undefined;
  stopping: TurnStopReason | null;
  launched: Promise<void>;
  said?: Said;
  /** Stopped while parked: its task ended when it parked, so none is finished when it ends. */
  taskless?: true;
};

/** A call waiting for a person: what `/approve` and `/deny` answer, and what the person is shown; `input`, the input whose turn made it. */
export type PendingApproval = Readonly<{
  approval: string;
  turn: string;
  callId: string;
  name: string;
  /** What the call would run with, as the model (or a handler) wrote it: what the person decides on. */
  args: Readonly<Record<string, unknown>>;
  conversation: string;
  input: string;
}>;

export class ApprovalUnknown extends HologramError {
  readonly code = 'APPROVAL_UNKNOWN';
  constructor(approval: string, pending: readonly PendingApproval[]) {
    super(
      `no call waits for approval '${approval}'` +
        (pending.length ? `; waiting: ${pending.map((p) => `${p.approval} (${p.name})`).join(', ')}` : '; none is waiting'),
    );
  }
}

/** Where a turn acts and answers, as its TurnRequested records it. */
type TurnOrigin = NonNullable<EventNamed<'TurnRequested'>['data']['origin']>;

/** What a tool call of the turn is told of where it comes from. */
const toolCallOrigin = (origin: TurnOrigin, principal: string | undefined): ToolCallOrigin => ({
  conversation: origin.conversation,
  ...(origin.replyChannel
    ? { replyTo: { channel: origin.replyChannel, ...(origin.replyTarget ? { target: origin.replyTarget } : {}) } }
    : {}),
  ...(principal ? { principal } : {}),
});

/** Where memory files what the turn says: its channel and conversation. */
const whereOf = (origin: TurnOrigin): Said['where'] => ({
  ...(origin.replyChannel ? { channel: origin.replyChannel } : {}),
  peer: origin.conversation,
});

type ReviewedInput = Readonly<{ text: string; findings?: readonly SecurityFinding[]; blocked?: boolean }>;

/**
 * An input as memory may hold it and recall by it: one the security review blocked is the notice
 * the person got, never its text, which memory would otherwise hand the model on a later turn.
 */
const rememberedInput = (input: ReviewedInput): string => (input.blocked ? blockedNotice(input.findings ?? [], 'input') : input.text);

/** What the turn said, for memory. */
const saidOf = (origin: TurnOrigin, input: ReviewedInput, at: number, sentBefore: number, principal: string): Said => ({
  conversation: origin.conversation,
  principal,
  where: whereOf(origin),
  ...(origin.replyTarget ? { target: origin.replyTarget } : {}),
  input: rememberedInput(input),
  blocked: input.blocked === true,
  at,
  sentBefore,
});

/** A parked turn: its run (which a resumed task takes over) and what it needs to go on. */
type Parked = Readonly<{ run: Running; turn: TurnActor; said: Said }>;

/** What a turn was asked, for memory once it ends: `sentBefore` counts the messages it started with (system prompt, history). */
type Said = Readonly<{
  conversation: string;
  /** Who sent the input. */
  principal: string;
  where: Readonly<{ channel?: string; peer: string }>;
  /** Where on the channel the reply goes. */
  target?: string;
  input: string;
  /** The input was blocked by the security review: `input` is the notice, whatever on_input made of the text. */
  blocked: boolean;
  at: number;
  sentBefore: number;
}>;

export class TurnRunner {
  private readonly running = new Map<string, Running>();
  /** Turns waiting for approvals with no task, by stream. */
  private readonly parked = new Map<string, Parked>();
  private readonly toolsets: ToolsetLedger;
  private unsubscribe: (() => void) | undefined;
  private stopped = false;

  constructor(private readonly options: TurnRunnerOptions) {
    this.toolsets = new ToolsetLedger(options.store);
  }

  async start(): Promise<void> {
    this.sayUnmatchedRules();
    await this.closeAbandoned();
    this.unsubscribe = this.options.scheduler.onFacts((facts) => this.onFacts(facts));
    const running = this.options.scheduler.state().running;
    if (running && !this.running.has(running.id)) this.begin(running.id);
  }

  /** Says which rules of the policy name no tool there is: a typo would leave an approve or a deny that never applies. */
  private sayUnmatchedRules(): void {
    const { policy = {} } = this.options;
    const layers = [
      { where: 'security.tools', rules: policy.tools ?? {} },
      ...Object.entries(policy.principals ?? {}).map(([name, rules]) => ({ where: `security.principals.${name}`, rules })),
    ];
    const registered = this.options.plugins.toolset();
    const tools = [...channelTools(registered.channels), ...registered.tools].map((tool) => tool.name);
    for (const { where, glob, closest } of rulesMatchingNoTool(layers, tools)) {
      this.options.log(
        `security: ${where} has '${glob}', which names none of the tools registered now (${nearest(closest, "see 'waiter /tools'")}); it applies only to a tool a plugin registers later`,
      );
    }
    // A secret set for a misspelt tool would never be filled in: said as a misspelt rule is.
    for (const { name, tools: granted } of registered.secrets ?? []) {
      for (const { glob, closest } of globsMatchingNoTool(granted, tools)) {
        this.options.log(
          `security: secret ${name} is set for '${glob}', which names none of the tools registered now (${nearest(closest, "see 'waiter --tools'")}); it is filled only into a tool a plugin registers later`,
        );
      }
    }
    if (!this.options.profiles) return;
    const principals = [OWNER, INTERNAL, ...this.options.profiles()];
    const named = [
      ...Object.keys(policy.principals ?? {}).map((name) => ({ where: `security.principals`, name })),
      ...(policy.owners ?? []).map((name) => ({ where: 'security.owners', name })),
    ];
    for (const { where, name } of named.filter((n) => !principals.includes(n.name))) {
      const hint = nearest(closestNames(name, principals, 3), 'no plugin declares a profile');
      this.options.log(
        `security: ${where} names '${name}', which is not owner, internal or a profile a plugin declares now (${hint}); it applies only once a plugin declaring it is added`,
      );
    }
  }

  /** Stops every running turn (recorded as a shutdown) and waits until each is done. */
  async stop(): Promise<void> {
    this.stopped = true;
    this.unsubscribe?.();
    // A parked turn stays open in the log: the next start parks it again.
    for (const { turn } of this.parked.values()) turn.close();
    this.parked.clear();
    const all = [...this.running.values()];
    await Promise.all(
      all.map(async (run) => {
        run.stopping = 'shutdown';
        if (run.turn) await run.turn.stop('shutdown').catch(() => undefined);
        else await run.launched;
        const { turn } = run;
        if (!turn) return; // it could not start
        await turn.done;
        await turn.settled();
        turn.close();
      }),
    );
  }

  private onFacts(facts: readonly SchedulerFact[]): void {
    for (const fact of facts) {
      switch (fact.type) {
        case 'TaskStarted':
        case 'TaskResumed':
          this.begin(fact.data.taskId);
          break;
        case 'TaskPreempted':
          this.stopTurn(fact.data.taskId, 'preempted');
          break;
        case 'StopRequested':
          if (fact.data.runningTaskId) this.stopTurn(fact.data.runningTaskId, 'stop');
          break;
        default:
          break;
      }
    }
  }

  private stopTurn(taskId: string, reason: TurnStopReason): void {
    const run = this.running.get(taskId);
    if (!run || run.stopping) return;
    run.stopping = reason;
    if (run.turn) this.sendStop(run, run.turn, reason);
  }

  private sendStop(run: Running, turn: TurnActor, reason: TurnStopReason): void {
    turn
      .stop(reason)
      .catch((error: unknown) => this.options.log(`turns: could not stop the turn of task ${run.taskId}: ${(error as Error).message}`));
  }

  private begin(taskId: string): void {
    const current = this.running.get(taskId);
    // A run being stopped (preempted, say, before its turn ended) gives way to the task's next run.
    if (this.stopped || (current && !current.stopping)) return;
    const payload = this.options.scheduler.inputOf(taskId);
    if (!payload) {
      this.options.log(`turns: task ${taskId} has no recorded input; finishing it as failed`);
      void this.finish(taskId, 'failed');
      return;
    }
    if (payload.resume) return void this.resume(taskId, payload.resume);
    const run: Running = { taskId, input: taskId, turn: undefined, stopping: null, launched: Promise.resolve() };
    this.running.set(taskId, run);
    run.launched = this.launch(run, payload).catch(async (error: unknown) => {
      this.options.log(`turns: task ${taskId} could not start: ${(error as Error).message}`);
      if (this.running.get(taskId) !== run) return; // a later run of the task owns it now
      this.running.delete(taskId);
      await this.finish(taskId, 'failed');
    });
  }

  private async launch(run: Running, input: InputPayload): Promise<void> {
    const { taskId } = run;
    const { memory, clock, plugins } = this.options;
    const conversation = input.conversation ?? `${input.replyChannel ?? '-'}:${input.replyTarget ?? '-'}`;
    const turnOrigin: TurnOrigin = {
      conversation,
      ...(input.replyChannel ? { replyChannel: input.replyChannel } : {}),
      ...(input.replyTarget ? { replyTarget: input.replyTarget } : {}),
    };
    const where = whereOf(turnOrigin);
    const principal = input.principal ?? OWNER;
    const origin = toolCallOrigin(turnOrigin, principal);
    const now = clock.now();
    const recalledBy = rememberedInput(input);
    // The graph is distilled from every conversation, the owner's too: a guest's turn recalls its own conversation alone.
    const ownOnly = !isPrivileged(this.options.policy ?? {}, principal);
    const related = await memory.related(recalledBy, conversation, { ...where, text: recalledBy, at: now }, ownOnly);
    const toolset = this.withParkedBound(
      withPolicy(plugins.toolset(), this.options.policy ?? {}, principal, this.options.profileOf?.(principal)),
      principal,
    );
    const layers = {
      persona: this.options.persona ?? DEFAULT_PERSONA,
      timeline: timelineBlock(now, this.options.timeZone ?? 'UTC'),
      runtime: runtimeBlock({ outputChannels: offeredChannels(toolset), parallelToolCalls: true }),
    };
    const plan = planTurnContext({
      contextWindow: this.contextWindow(),
      fixedPrompt: assembleSystemPrompt(layers),
      input: input.text,
      tools: offeredTools(toolset),
      history: memory.history(conversation),
      related,
    });
    const history = plan.history;
    const systemPrompt = assembleSystemPrompt({ ...layers, memory: plan.memory.join('\n'), knowledge: plan.knowledge.join('\n') });
    const toolsetId = await this.toolsets.record(toolset);
    const turnId = this.options.ids.next();
    const turn = new TurnActor({
      store: this.options.store,
      stream: `${TURN_STREAM_PREFIX}${turnId}`,
      toolset,
      effects: this.effectsFor(origin),
      clock,
      timers: this.options.timers,
      ...(this.options.inspect ? { inspect: this.options.inspect } : {}),
      onFacts: () => this.parkIfWaiting(run, said),
    });
    run.turn = turn;
    const said = saidOf(turnOrigin, input, now, 1 + history.length, principal);
    run.said = said;
    void turn.done.then((outcome) => this.completed(run, turn, outcome, said));
    const started = turn.start({
      turnId,
      taskId,
      input: input.text,
      model: this.options.llm.model,
      maxRounds: this.options.maxRounds ?? DEFAULT_MAX_ROUNDS,
      ...(systemPrompt ? { systemPrompt } : {}),
      ...(history.length ? { history } : {}),
      toolset: toolsetId,
      principal,
      ...(input.findings?.length ? { inputFindings: [...input.findings] } : {}),
      ...(input.blocked ? { inputBlocked: true } : {}),
      ...(plan.inputTooLong ? { inputTooLong: plan.inputTooLong } : {}),
      origin: turnOrigin,
    });
    // Preempted, stopped or shut down while it launched: the turn is stopped as it starts.
    if (run.stopping) this.sendStop(run, turn, run.stopping);
    await started;
  }

  private effectsFor(origin: ToolCallOrigin | undefined) {
    const { plugins } = this.options;
    return {
      ...modelEffects(this.options.llm),
      callTool: (invocation: Parameters<TurnPlugins['callTool']>[0], signal: AbortSignal) => plugins.callTool(invocation, signal, origin),
      runHandler: plugins.runHandler,
    };
  }

  // ── approvals ─────────────────────────────────────────────────────────────────────────

  /** Every call waiting for a person, parked or in a running turn. */
  pending(): PendingApproval[] {
    const entries = [
      ...[...this.parked].map(([stream, { run, turn, said }]) => ({ stream, turn, conversation: said.conversation, input: run.input })),
      ...[...this.running.values()].flatMap((run) =>
        run.turn ? [{ stream: run.turn.stream, turn: run.turn, conversation: run.said?.conversation ?? '', input: run.input }] : [],
      ),
    ];
    return entries.flatMap(({ stream, turn, conversation, input }) =>
      pendingApprovals(turn.state).map((p) => ({ ...p, turn: stream, conversation, input })),
    );
  }

  /**
   * Answers a waiting call: a turn still holding its task takes the answer now; a parked one
   * when the scheduler runs the answer, queued as an input of the kernel's own.
   * @throws ApprovalUnknown naming the approvals that do wait
   */
  async answer(answer: ApprovalAnswer): Promise<void> {
    const pending = this.pending();
    const waiting = pending.find((p) => p.approval === answer.approval);
    if (!waiting) throw new ApprovalUnknown(answer.approval, pending);
    const live = [...this.running.values()].find((run) => run.turn?.stream === waiting.turn);
    if (live?.turn) {
      await live.turn.send({ type: 'ApprovalAnswered', data: { ...answer } });
      return;
    }
    const parked = this.parked.get(waiting.turn)!;
    const route = parked.said.where.channel;
    await this.options.scheduler.submit({
      id: this.options.ids.next(),
      source: 'approvals',
      origin: 'user',
      // The person's answer waits no longer than the person's messages do.
      kind: 'interrupt',
      level: PERSON_LEVEL,
      payload: {
        text: `${answer.approved ? 'approved' : 'refused'} ${answer.approval}`,
        replyChannel: route ?? null,
        replyTarget: parked.said.target ?? null,
        conversation: parked.said.conversation,
        principal: INTERNAL,
        resume: { turn: waiting.turn, ...answer },
      },
    });
  }

  /**
   * Stops the parked turns whose input `which` picks, as a stop of a running one does: each ends
   * stopped, its waiting calls not run and the model not asked again. How many it stopped.
   */
  async stopParked(which: (input: string) => boolean): Promise<number> {
    const picked = [...this.parked].filter(([, { run }]) => which(run.input));
    for (const [stream, { run, turn }] of picked) {
      this.parked.delete(stream);
      run.stopping = 'stop';
      run.taskless = true;
      await turn.stop('stop');
    }
    return picked.length;
  }

  /** The task a reply to `input` runs under now that an approval's answer resumed it, if it runs. */
  resumedTaskOf(input: string): string | undefined {
    return [...this.running.values()].find((run) => run.input === input && run.taskId !== input && !run.stopping)?.taskId;
  }

  /**
   * The toolset, with as many of its calls allowed to wait for approval as the plugin `principal`
   * speaks for (one the owner has not vouched for) has left of MAX_WAITING_CALLS_PER_PLUGIN, counting
   * the calls of every parked reply to any of its principals: parked replies hold no input's place,
   * so without this a plugin's guest could pile them up without end (per principal, a plugin
   * declaring many profiles did; per reply, one asking for 40 calls at once did).
   */
  private withParkedBound(toolset: Toolset, principal: string): Toolset {
    const policy = this.options.policy ?? {};
    if (isPrivileged(policy, principal)) return toolset;
    const plugin = pluginOfPrincipal(principal);
    const waiting = [...this.parked.values()]
      .filter(({ said }) => pluginOfPrincipal(said.principal) === plugin && !isPrivileged(policy, said.principal))
      .reduce((calls, { turn }) => calls + pendingApprovals(turn.state).length, 0);
    const why = `${MAX_WAITING_CALLS_PER_PLUGIN} calls of replies to the inputs of plugin ${plugin} may wait for a person's approval at once; ask again once they are answered`;
    if (waiting >= MAX_WAITING_CALLS_PER_PLUGIN) return { ...toolset, approvalsRefused: why };
    return { ...toolset, approvalsAtMost: { calls: MAX_WAITING_CALLS_PER_PLUGIN - waiting, why } };
  }

  /** Once a turn waits only for people, its task ends and the turn waits parked. */
  private parkIfWaiting(run: Running, said: Said): void {
    const { turn } = run;
    if (!turn || !awaitsApproval(turn.state) || this.parked.has(turn.stream) || this.stopped) return;
    if (this.running.get(run.taskId) === run) this.running.delete(run.taskId);
    this.parked.set(turn.stream, { run, turn, said });
    void this.finish(run.taskId, 'done');
  }

  /** The scheduler runs an answer: the parked turn takes it under the answer's task. */
  private resume(taskId: string, resume: NonNullable<InputPayload['resume']>): void {
    const parked = this.parked.get(resume.turn);
    if (!parked || !pendingApprovals(parked.turn.state).some((p) => p.approval === resume.approval)) {
      this.options.log(`turns: approval ${resume.approval} was answered already or its turn is gone; nothing to resume`);
      void this.finish(taskId, 'done');
      return;
    }
    this.parked.delete(resume.turn);
    const { run, turn } = parked;
    run.taskId = taskId;
    run.stopping = null;
    this.running.set(taskId, run);
    const { turn: _stream, ...answer } = resume;
    run.launched = turn
      .send({ type: 'ApprovalAnswered', data: answer })
      .then(() => undefined)
      .catch((error: unknown) =>
        this.options.log(`turns: approval ${resume.approval} could not reach its turn: ${(error as Error).message}`),
      );
  }

  private warnedWindow = false;

  /** The window of the source the chain asks first; a source that declares none gets the fallback, said once. */
  private contextWindow(): number | undefined {
    const { llm } = this.options;
    const window = 'chain' in llm ? llm.chain.primary()?.contextWindow : undefined;
    if (window === undefined && 'chain' in llm && !this.warnedWindow) {
      this.warnedWindow = true;
      this.options.log(
        `turns: the LLM source declares no contextWindow; prompts are kept within ${FALLBACK_CONTEXT_WINDOW} tokens ` +
          '(set "contextWindow" on the source in settings.json)',
      );
    }
    return window;
  }

  /**
   * The turn ended: what was said enters memory now, after on_input had its say (memory keeps
   * the input as on_input left it), then the tool rounds and the reply the user was sent (of a
   * stopped reply, the part that was sent).
   * A preempted or shut-down task runs again from its input, so it enters memory then.
   */
  private async completed(run: Running, turn: TurnActor, outcome: TurnOutcome, said: Said): Promise<void> {
    await turn.settled();
    if (this.running.get(run.taskId) === run) this.running.delete(run.taskId);
    // A preempted task runs again when resumed; a shut-down one is left to the next start.
    if (run.stopping === 'preempted' || run.stopping === 'shutdown') return;
    const sent = turn.state.output;
    const { memory } = this.options;
    const { conversation } = said;
    try {
      await memory.observe(conversation, 'user', said.blocked ? said.input : (turn.state.stage.input ?? said.input), said.at, said.where);
      if (sent && (sent.kind === 'answer' || sent.kind === 'handler' || sent.kind === 'cancelled') && sent.text) {
        const at = Math.max(said.at, this.options.clock.now());
        // A stopped round may have calls without their results: only what the user was sent of it is kept.
        if (sent.kind !== 'cancelled')
          await memory.observeTools(conversation, toolRoundsOf(turn.state.messages.slice(said.sentBefore)), at);
        await memory.observe(conversation, 'agent', sent.text, at);
      }
    } catch (error) {
      this.options.log(`turns: what task ${run.taskId} said did not enter memory: ${(error as Error).message}`);
    }
    if (!run.taskless) await this.finish(run.taskId, TASK_OUTCOME[outcome]);
  }

  private async finish(taskId: string, outcome: 'done' | 'failed' | 'cancelled'): Promise<void> {
    await this.options.scheduler
      .finish(taskId, outcome)
      .then(() => undefined)
      .catch((error: unknown) => this.options.log(`turns: could not finish task ${taskId}: ${(error as Error).message}`));
  }

  /**
   * Turns the previous process left open: one waiting only for approvals is parked again; any
   * other (a killed daemon's) gets a recorded end, stopped as abandoned.
   */
  private async closeAbandoned(): Promise<void> {
    for (const stream of (await this.options.openTurns?.()) ?? []) {
      const events = await this.options.store.readStream(stream);
      const request = events[0];
      if (request?.type !== 'TurnRequested' || request.schemaVersion < 2) continue;
      const toolset = await this.toolsets.get(request.data.toolset);
      if (!toolset) continue;
      const history = events.filter((e) => (TURN_INPUT_TYPES as readonly string[]).includes(e.type)).map(asMessage);
      const { origin } = request.data;
      const input = request.data.taskId ?? '';
      const run: Running = { taskId: input, input, turn: undefined, stopping: null, launched: Promise.resolve() };
      const said =
        origin &&
        saidOf(
          origin,
          {
            text: request.data.input,
            ...(request.data.inputFindings ? { findings: request.data.inputFindings } : {}),
            ...(request.data.inputBlocked ? { blocked: true } : {}),
          },
          request.at,
          (request.data.systemPrompt ? 1 : 0) + (request.data.history?.length ?? 0),
          request.data.principal ?? OWNER,
        );
      const turn = new TurnActor({
        store: this.options.store,
        stream,
        toolset,
        effects: this.effectsFor(origin && toolCallOrigin(origin, request.data.principal)),
        clock: this.options.clock,
        timers: this.options.timers,
        ...(this.options.inspect ? { inspect: this.options.inspect } : {}),
        history,
        ...(said ? { onFacts: () => this.parkIfWaiting(run, said) } : {}),
      });
      run.turn = turn;
      if (said && awaitsApproval(turn.state)) {
        run.said = said;
        this.parked.set(stream, { run, turn, said });
        void turn.done.then((outcome) => this.completed(run, turn, outcome, said));
        continue;
      }
      await turn.stop('abandoned');
      await turn.done; // only after_output is left, bounded by its stage timeout
      await turn.settled();
      turn.close();
    }
  }
}

/**
 * The tool rounds in what a turn added to its conversation: the messages after the input, but
 * the final answer (memory keeps what the user was sent instead). None if no input was added.
 */
const toolRoundsOf = (added: readonly TurnMessage[]): TurnMessage[] => {
  const input = added.findIndex((m) => m.role === 'user');
  if (input < 0) return [];
  const rounds = added.slice(input + 1);
  return rounds.at(-1)?.role === 'assistant' && !rounds.at(-1)?.toolCalls?.length ? rounds.slice(0, -1) : rounds;
};

const asMessage = (event: Recorded): TurnInputMessage => ({ type: event.type, data: event.data, at: event.at }) as TurnInputMessage;
