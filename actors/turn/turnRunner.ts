/**
 * Runs a turn for each task the scheduler starts: the input's text (recorded when a plugin
 * injected it) goes through `runTurn` with the plugins' tools and stage handlers, the reply
 * streams to the channel and target the input named, and the task is finished with the
 * turn's outcome. A stop aborts the running turn (its HTTP request included); a preempted
 * turn is aborted too and runs again from its input when the task resumes.
 */
import type { Clock, EventStore, RecordedEvent } from '../../events/index.ts';
import type { TurnMemory } from '../memory/turnMemory.ts';
import type { SchedulerFact } from '../../machines/scheduler/index.ts';
import { assembleSystemPrompt, runtimeBlock, type OutputChannel, type TurnOutcome } from '../../machines/turn/index.ts';
import type { ProviderChain } from '../llm/providerChain.ts';
import { OutputPump } from '../output/outputPump.ts';
import { runTurn, type ChannelBinding, type TurnPlugins } from './runTurn.ts';

export type TurnInputRecord = Readonly<{
  inputId: string;
  text: string;
  replyChannel: string | null;
  replyTarget: string | null;
  conversation: string | null;
}>;

export type OutputDelivery = Readonly<{ channel: string; target: string | null; kind: 'chunk' | 'end' | 'message'; text: string }>;

/** What the turn runner needs of the plugins (the plugin host's facility has this shape). */
export type TurnSource = Readonly<{
  onInput(listener: (input: TurnInputRecord) => void): () => void;
  turnPlugins(): TurnPlugins;
  channels(): readonly OutputChannel[];
  deliver(delivery: OutputDelivery): Promise<void>;
}>;

export type TaskSink = Readonly<{
  finish(taskId: string, outcome: 'done' | 'failed' | 'cancelled'): Promise<unknown>;
  onFacts(listener: (facts: readonly SchedulerFact[]) => void): () => void;
}>;

/** The model to ask, or why there is none. */
export type TurnModel = Readonly<{ chain: ProviderChain; model: string }> | Readonly<{ missing: string }>;

export type TurnRunnerOptions = Readonly<{
  store: EventStore;
  tasks: TaskSink;
  source: TurnSource;
  model: TurnModel;
  systemPrompt?: string;
  maxRounds?: number;
  log: (line: string) => void;
  /** The memory: the conversation comes from its L1 context, related items from its colder tiers. */
  memory: TurnMemory;
  clock: Clock;
}>;

type Running = { controller: AbortController; why: 'running' | 'preempted' | 'stopped'; done: Promise<void> };

const TASK_OUTCOME: Readonly<Record<TurnOutcome, 'done' | 'failed' | 'cancelled'>> = {
  answered: 'done',
  short_circuited: 'done',
  denied: 'done',
  round_limit: 'done',
  cancelled: 'cancelled',
  failed: 'failed',
};

export class TurnRunner {
  private readonly inputs = new Map<string, TurnInputRecord>();
  private readonly running = new Map<string, Running>();
  private readonly unsubscribe: (() => void)[] = [];

  constructor(private readonly options: TurnRunnerOptions) {}

  /** Learns the inputs already in the log, then follows new ones and the scheduler's decisions. */
  async start(): Promise<void> {
    for (const event of await this.options.store.readAll({ types: ['PluginInputInjected'] })) this.remember(event);
    this.unsubscribe.push(this.options.source.onInput((input) => this.inputs.set(input.inputId, input)));
    this.unsubscribe.push(this.options.tasks.onFacts((facts) => this.onFacts(facts)));
  }

  async stop(): Promise<void> {
    for (const off of this.unsubscribe.splice(0)) off();
    for (const run of this.running.values()) {
      run.why = 'stopped';
      run.controller.abort();
    }
    await Promise.all([...this.running.values()].map((r) => r.done));
  }

  private remember(event: RecordedEvent): void {
    const d = event.data as {
      inputId: string;
      text: string;
      replyChannel?: string | null;
      replyTarget?: string | null;
      conversation?: string | null;
    };
    this.inputs.set(d.inputId, {
      inputId: d.inputId,
      text: d.text,
      replyChannel: d.replyChannel ?? null,
      replyTarget: d.replyTarget ?? null,
      conversation: d.conversation ?? null,
    });
  }

  private onFacts(facts: readonly SchedulerFact[]): void {
    for (const fact of facts) {
      switch (fact.type) {
        case 'TaskPreempted':
          this.abort(fact.data.taskId, 'preempted');
          break;
        case 'StopRequested':
          if (fact.data.runningTaskId) this.abort(fact.data.runningTaskId, 'running');
          break;
        case 'TaskStarted':
        case 'TaskResumed':
          this.begin(fact.data.taskId);
          break;
        case 'InputShortCircuited':
          this.reply(fact.data.inputId, 'end', 'stopped before it started');
          break;
        default:
          break;
      }
    }
  }

  private abort(taskId: string, why: Running['why']): void {
    const run = this.running.get(taskId);
    if (!run) return;
    run.why = why;
    run.controller.abort();
  }

  private reply(inputId: string, kind: OutputDelivery['kind'], text: string): void {
    const input = this.inputs.get(inputId);
    if (!input?.replyChannel) return;
    this.options.source
      .deliver({ channel: input.replyChannel, target: input.replyTarget, kind, text })
      .catch((error: unknown) => this.options.log(`turns: reply to ${input.replyChannel} failed: ${(error as Error).message}`));
  }

  private begin(taskId: string): void {
    const input = this.inputs.get(taskId);
    const controller = new AbortController();
    const run: Running = { controller, why: 'running', done: Promise.resolve() };
    this.running.set(taskId, run);
    run.done = this.execute(taskId, input, controller.signal)
      .then(
        async (outcome) => {
          if (run.why === 'preempted' || run.why === 'stopped') return;
          await this.options.tasks.finish(taskId, outcome);
        },
        async (error: unknown) => {
          this.options.log(`turns: task ${taskId} failed: ${(error as Error).message}`);
          this.reply(taskId, 'end', `the turn failed: ${(error as Error).message}`);
          if (run.why === 'running') await this.options.tasks.finish(taskId, 'failed');
        },
      )
      .catch((error: unknown) => this.options.log(`turns: could not finish task ${taskId}: ${(error as Error).message}`))
      .finally(() => {
        if (this.running.get(taskId) === run) this.running.delete(taskId);
      });
  }

  private async execute(taskId: string, input: TurnInputRecord | undefined, signal: AbortSignal): Promise<'done' | 'failed' | 'cancelled'> {
    if (!input) {
      this.options.log(`turns: task ${taskId} has no recorded input text; finishing it as failed`);
      return 'failed';
    }
    const { model } = this.options;
    if ('missing' in model) {
      this.reply(taskId, 'end', model.missing);
      return 'failed';
    }
    const conversation = input.conversation ?? `${input.replyChannel ?? '-'}/${input.replyTarget ?? '-'}`;
    const { memory, clock } = this.options;
    const where = { ...(input.replyChannel ? { channel: input.replyChannel } : {}), peer: conversation };
    const inputEventId = await memory.observe(conversation, 'user', input.text, clock.now(), where);
    const history = memory.history(conversation, inputEventId);
    const related = await memory.related(input.text, conversation, { ...where, text: input.text, at: clock.now() });
    const channelsNow = this.options.source.channels();
    // Prompt layers in their fixed order; no tool usage instructions, only what the kernel does.
    const systemPrompt = assembleSystemPrompt({
      ...(this.options.systemPrompt ? { persona: this.options.systemPrompt } : {}),
      ...related,
      runtime: runtimeBlock({ outputChannels: channelsNow.map((c) => c.name), parallelToolCalls: true }),
    });
    const channels: ChannelBinding[] = channelsNow.map((channel) => ({
      channel,
      device: { send: (text: string) => this.options.source.deliver({ channel: channel.name, target: null, kind: 'message', text }) },
    }));
    const replyTo = input.replyChannel;
    const pump = new OutputPump({
      channel: replyTo ?? '(none)',
      resolveDevice: () =>
        replyTo
          ? { send: (text) => this.options.source.deliver({ channel: replyTo, target: input.replyTarget, kind: 'chunk', text }) }
          : undefined,
      report: (report) =>
        this.options.log(`turns: reply ${report.type} on ${report.channel}${'error' in report ? `: ${report.error}` : ''}`),
    });
    const { output } = await runTurn({
      store: this.options.store,
      chain: model.chain,
      model: model.model,
      input: input.text,
      ...(systemPrompt ? { systemPrompt } : {}),
      history,
      ...(this.options.maxRounds ? { maxRounds: this.options.maxRounds } : {}),
      channels,
      plugins: this.options.source.turnPlugins(),
      signal,
      onText: (text) => replyTo && pump.push(text),
      onPumpReport: (report) => this.options.log(`turns: output ${report.type} on ${report.channel}`),
    }).finally(() => pump.close());
    if (output.reply) await memory.observe(conversation, 'agent', output.reply, clock.now());
    this.reply(taskId, 'end', output.outcome === 'answered' ? '' : `(${output.outcome.replace('_', ' ')})`);
    return TASK_OUTCOME[output.outcome];
  }
}
