/**
 * One running turn: the turn machine journaled into its own stream, and the effects its
 * committed facts ask for. `LlmRequested` asks the model (its streamed pieces come back as
 * `LlmChunkRecorded`, one per frame of streaming, then the whole answer);
 * `StageStarted` asks the stage's handlers and arms the stage's timeout; `ToolCalled` runs a
 * plugin's tool; `TurnCancelled` aborts whatever is in flight. Every result comes back as a
 * message journaled like any other, so the log alone reproduces the turn.
 */
import { messageOf, type Clock, type EventStore, type Timers } from '../../events/index.ts';
import type { HandlerInput, HandlerResolution } from '../../machines/stagePipeline/index.ts';
import {
  parseChannelTool,
  turnMachine,
  type LlmAnswer,
  type LlmCall,
  type ToolInvocation,
  type ToolResult,
  type Toolset,
  type TurnFact,
  type TurnInputEvent,
  type TurnInputMessage,
  type TurnOutcome,
  type TurnState,
  type TurnStopReason,
  TURN_RULES,
} from '../../machines/turn/index.ts';
import { JournaledActor, type Fact } from '../journal/journaledActor.ts';

/** How a turn reaches the world: the model, the plugins' tools and stage handlers. */
export type TurnEffects = Readonly<{
  /** Asks the model; streamed text goes to `onDelta` as it arrives. Rejects when every source failed or on abort. */
  complete(call: LlmCall, options: { signal: AbortSignal; onDelta: (text: string) => void }): Promise<LlmAnswer & { source?: string }>;
  callTool(invocation: ToolInvocation, signal: AbortSignal): Promise<ToolResult>;
  runHandler(input: HandlerInput, signal: AbortSignal): Promise<HandlerResolution>;
}>;

/**
 * Streamed pieces are journaled at most once per frame (and never while a commit is in flight):
 * a model that streams a token a millisecond costs one commit a frame, and an answer that comes
 * within the frame of its pieces carries them itself. 20 ms is below what a reader notices.
 */
export const CHUNK_FRAME_MS = 20;

export type TurnActorOptions = Readonly<{
  store: EventStore;
  stream: string;
  toolset: Toolset;
  effects: TurnEffects;
  clock: Clock;
  timers: Timers;
  /** Messages the log already holds for this turn: restores it without running their effects again. */
  history?: readonly TurnInputMessage[];
  /** Every batch of facts once it is in the log. */
  onFacts?: (facts: readonly TurnFact[]) => void;
  inspect?: ConstructorParameters<typeof JournaledActor>[0]['inspect'];
  /** How long streamed pieces gather before they are journaled; default CHUNK_FRAME_MS. */
  chunkFrameMs?: number;
}>;

export class TurnActor {
  private readonly journal: JournaledActor<typeof turnMachine>;
  private readonly inFlight = new Set<AbortController>();
  private readonly stageTimers = new Map<number, unknown>();
  private finished!: (outcome: TurnOutcome) => void;
  /** Resolves with the turn's outcome once `TurnCompleted` is in the log. */
  readonly done = new Promise<TurnOutcome>((resolve) => {
    this.finished = resolve;
  });

  constructor(private readonly options: TurnActorOptions) {
    this.journal = new JournaledActor({
      store: options.store,
      stream: options.stream,
      logic: turnMachine,
      input: { toolset: options.toolset },
      recording: 'as-event',
      ...(options.history ? { history: options.history } : {}),
      ...(options.inspect ? { inspect: options.inspect } : {}),
      onFacts: (facts) => this.perform(facts as readonly TurnFact[]),
    });
    const { context } = this.journal.snapshot;
    if (context.phase === 'done') this.finished(context.outcome ?? 'answered');
  }

  /** The turn's stream in the log. */
  get stream(): string {
    return this.options.stream;
  }

  get state(): TurnState {
    return this.journal.snapshot.context;
  }

  /** Journals a message and runs the effects of the facts it caused. */
  send(message: TurnInputEvent): Promise<readonly Fact[]> {
    return this.journal.deliver({ ...message, at: this.options.clock.now() } as TurnInputMessage);
  }

  /** Begins the turn, decided by this build's rules (TURN_RULES) unless the request names older ones. */
  start(request: Extract<TurnInputEvent, { type: 'TurnRequested' }>['data']): Promise<readonly Fact[]> {
    return this.send({ type: 'TurnRequested', data: { rules: TURN_RULES, ...request } });
  }

  /** Stops the turn (a turn past its output is not stopped: only after_output is left, and it runs). */
  stop(reason: TurnStopReason): Promise<readonly Fact[]> {
    return this.send({ type: 'TurnStopRequested', data: { reason } });
  }

  /** Resolves when every message delivered so far is processed (effects still running are not waited for). */
  settled(): Promise<void> {
    return this.journal.settled();
  }

  /** Aborts what is in flight and stops taking messages (the daemon is going away; the turn was stopped first). */
  close(): void {
    this.abortAll();
    this.journal.stop();
  }

  private perform(facts: readonly TurnFact[]): void {
    for (const fact of facts) {
      switch (fact.type) {
        case 'LlmRequested':
          this.askModel(fact.data.round);
          break;
        case 'StageStarted':
          this.askHandlers(fact.data.run, fact.data.stage, fact.data.handlers);
          break;
        case 'StageRan':
          this.clearStageTimer(fact.data.run);
          break;
        case 'ToolCalled':
          this.runTool(fact.data);
          break;
        case 'TurnCancelled':
          this.abortAll();
          break;
        case 'TurnCompleted':
          this.finished(fact.data.outcome);
          break;
        default:
          break;
      }
    }
    this.options.onFacts?.(facts);
  }

  private track(): AbortController {
    const controller = new AbortController();
    this.inFlight.add(controller);
    return controller;
  }

  private untrack(controller: AbortController): boolean {
    this.inFlight.delete(controller);
    return !controller.signal.aborted;
  }

  private abortAll(): void {
    for (const controller of this.inFlight) controller.abort();
    this.inFlight.clear();
    for (const run of [...this.stageTimers.keys()]) this.clearStageTimer(run);
  }

  private deliver(message: TurnInputEvent): void {
    this.send(message).catch(() => undefined); // a broken journal stops the actor; the runner sees the daemon fail
  }

  private askModel(round: number): void {
    const { messages, tools } = this.state;
    const call: LlmCall = {
      messages,
      tools: tools.map((t) => ({ name: t.name, description: t.description, parameters: { ...t.parameters } })),
    };
    const controller = this.track();
    let index = 0;
    let pending = '';
    let recording: Promise<unknown> = Promise.resolve();
    let inFlight = false;
    let answered = false;
    // Pieces of one frame, or that arrive while one is being committed, go out in one message;
    // an answer that arrives within their frame carries them itself.
    const flush = (): void => {
      if (inFlight || answered || pending === '' || controller.signal.aborted) return;
      const text = pending;
      pending = '';
      inFlight = true;
      recording = this.send({ type: 'LlmChunkRecorded', data: { round, index: index++, text } }).finally(() => {
        inFlight = false;
        flush();
      });
    };
    this.options.effects
      .complete(call, {
        signal: controller.signal,
        onDelta: (text) => {
          const first = pending === '';
          pending += text;
          if (first && !inFlight) this.options.timers.setTimer(flush, this.options.chunkFrameMs ?? CHUNK_FRAME_MS);
        },
      })
      .then(
        async ({ source, ...answer }) => {
          answered = true;
          await recording.catch(() => undefined);
          while (inFlight) await recording.catch(() => undefined);
          if (!this.untrack(controller)) return;
          const recorded: LlmAnswer = { text: answer.text, toolCalls: answer.toolCalls, finishReason: answer.finishReason };
          this.deliver({ type: 'LlmAnswerRecorded', data: { round, ...(source ? { source } : {}), answer: recorded } });
        },
        async (error: unknown) => {
          answered = true;
          await recording.catch(() => undefined);
          if (!this.untrack(controller)) return;
          this.deliver({ type: 'LlmAnswerRecorded', data: { round, error: messageOf(error) } });
        },
      );
  }

  private askHandlers(run: number, stage: HandlerInput['stage'], handlerIds: readonly string[]): void {
    const open = this.state.runs.find((r) => r.run.run === run);
    if (!open) return;
    const { context, timeoutMs } = open.run.input;
    this.stageTimers.set(
      run,
      this.options.timers.setTimer(() => {
        this.stageTimers.delete(run);
        this.deliver({ type: 'StageTimedOut', data: { run } });
      }, timeoutMs),
    );
    for (const handlerId of handlerIds) {
      const controller = this.track();
      // Each handler gets its own copy: one that mutates what it was given cannot reach the others.
      this.options.effects.runHandler({ handlerId, stage, context: structuredClone(context) }, controller.signal).then(
        (change) => {
          if (this.untrack(controller)) this.deliver({ type: 'HandlerResultRecorded', data: { run, handlerId, change: change ?? null } });
        },
        (error: unknown) => {
          if (this.untrack(controller))
            this.deliver({ type: 'HandlerResultRecorded', data: { run, handlerId, error: handlerError(error) } });
        },
      );
    }
  }

  private clearStageTimer(run: number): void {
    const timer = this.stageTimers.get(run);
    if (timer === undefined) return;
    this.options.timers.clearTimer(timer);
    this.stageTimers.delete(run);
  }

  private runTool(called: Extract<TurnFact, { type: 'ToolCalled' }>['data']): void {
    const { callId, name, owner, args } = called;
    const channel = parseChannelTool(name);
    if (channel && this.options.toolset.channels.some((c) => c.name === channel.channel)) return; // decided by the turn, delivered by the output actor
    const controller = this.track();
    this.options.effects.callTool({ callId, name, owner, args }, controller.signal).then(
      (result) => {
        if (!this.untrack(controller)) return;
        const { content, isError, filled, findings, blocked, refused } = result;
        this.deliver({
          type: 'ToolResultRecorded',
          data: {
            callId,
            name,
            content,
            ...(isError ? { isError: true } : {}),
            ...(filled?.length ? { filled: [...filled] } : {}),
            ...(findings?.length ? { findings: [...findings] } : {}),
            ...(blocked ? { blocked: true } : {}),
            ...(refused !== undefined ? { refused } : {}),
          },
        });
      },
      (error: unknown) => {
        if (!this.untrack(controller)) return;
        this.deliver({
          type: 'ToolResultRecorded',
          data: { callId, name, content: `Error: tool '${name}' failed: ${messageOf(error)}`, isError: true },
        });
      },
    );
  }
}

/** A handler that rejects with something other than an Error or a string is described as such. */
const handlerError = (error: unknown): string =>
  error instanceof Error || typeof error === 'string' ? messageOf(error) : `rejected with ${String(error)}`;
