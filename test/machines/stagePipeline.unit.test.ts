import { SimulatedClock, assign, createActor, fromPromise, setup, toPromise } from 'xstate';
import { describe, expect, it } from 'vitest';
import {
  STAGES,
  StageInputError,
  createStageContext,
  mergeChanges,
  stagePipelineMachine,
  type HandlerInput,
  type HandlerRef,
  type HandlerResolution,
  type StageFact,
  type StagePipelineOutput,
  type StagePipelineInput,
} from '../../machines/stagePipeline/index.ts';
import { flush, runStage } from '../support/stageHarness.ts';

const global = (id: string, plugin = `p-${id}`): HandlerRef => ({ id, plugin, scope: 'global' });
const ownTools = (id: string, plugin: string): HandlerRef => ({ id, plugin, scope: 'own_tools' });

const readCall = { id: 'call-1', name: 'files_read', args: { path: '/etc/passwd', limit: 10 } };
const toolStage = (
  stage: 'before_toolcall' | 'after_toolcall',
  handlers: HandlerRef[],
  extra: Partial<StagePipelineInput> = {},
): StagePipelineInput => ({
  stage,
  context: createStageContext('read it', { toolCall: readCall, toolResult: stage === 'after_toolcall' ? 'user=root token=abc123' : null }),
  handlers,
  timeoutMs: 1_000,
  scope: { toolName: 'files_read', ownerPlugin: 'files' },
  ...extra,
});
const onInput = (handlers: HandlerRef[]): StagePipelineInput => ({
  stage: 'on_input',
  context: createStageContext('hello'),
  handlers,
  timeoutMs: 1_000,
});

describe('stagePipelineMachine', () => {
  it('names the seven stages in turn order', () => {
    expect(STAGES).toEqual(['on_input', 'pre_action', 'post_action', 'before_toolcall', 'after_toolcall', 'before_output', 'after_output']);
  });

  it('starts every applicable handler before any of them settles, each on the same context', async () => {
    const run = runStage(onInput([global('a'), global('b'), global('c')]));
    expect(run.started).toEqual(['a', 'b', 'c']);
    expect(run.seen.map((s) => s.context)).toEqual([onInput([]).context, onInput([]).context, onInput([]).context]);
    expect(run.seen[0]).toMatchObject({ handlerId: 'a', stage: 'on_input' });
    expect(run.actor.getSnapshot().status).toBe('active');
    await run.settle(['c', 'resolve'], ['b', 'resolve'], ['a', 'resolve']);
    expect((await run.output()).outcomes.map((o) => o.status)).toEqual(['unchanged', 'unchanged', 'unchanged']);
  });

  it('keeps what a handler does to its copy of the context out of the result: only changes count', async () => {
    const run = runStage(onInput([global('sneaky'), global('honest')]));
    (run.seen[0]!.context as { input: string }).input = 'mutated in place';
    await run.settle(['sneaky', 'resolve'], ['honest', 'resolve']);
    expect(run.seen[1]!.context.input).toBe('hello');
    expect((await run.output()).context.input).toBe('hello');
  });

  it('merges changes in handler order, whatever order they complete in', async () => {
    const handlers = [global('first'), global('second')];
    const byCompletion = async (order: ['first' | 'second', 'first' | 'second']) => {
      const run = runStage(onInput(handlers));
      await run.settle(...order.map((id) => [id, 'resolve', { set: { input: `rewritten by ${id}` } }] as [string, 'resolve', unknown]));
      return { output: await run.output(), facts: run.facts };
    };
    const secondFinishedFirst = await byCompletion(['second', 'first']);
    const firstFinishedFirst = await byCompletion(['first', 'second']);
    expect(secondFinishedFirst.output.context.input).toBe('rewritten by second');
    expect(secondFinishedFirst).toEqual(firstFinishedFirst);
  });

  it('records a rejecting handler as failed and keeps the others', async () => {
    const run = runStage(onInput([global('broken'), global('fine')]));
    await run.settle(['broken', 'reject', new Error('plugin crashed')], ['fine', 'resolve', { set: { input: 'cleaned' } }]);
    const output = await run.output();
    expect(output.outcomes).toEqual([
      { handlerId: 'broken', plugin: 'p-broken', status: 'failed', error: 'plugin crashed' },
      { handlerId: 'fine', plugin: 'p-fine', status: 'changed', change: { set: { input: 'cleaned' } } },
    ]);
    expect(output.context.input).toBe('cleaned');
    expect(run.facts.map((f) => f.type)).toEqual(['StageHandlerFailed', 'StageHandlerChanged', 'StageCompleted']);
  });

  it('times a handler out on the clock and ignores its late result', async () => {
    const run = runStage(onInput([global('quick'), global('slow')]));
    await run.settle(['quick', 'resolve', { set: { input: 'quick' } }]);
    run.clock.increment(999);
    await flush();
    expect(run.actor.getSnapshot().status).toBe('active');
    run.clock.increment(1);
    const output = await run.output();
    expect(output.outcomes[1]).toEqual({ handlerId: 'slow', plugin: 'p-slow', status: 'timed_out', error: 'no result within 1000 ms' });
    const factsAtTimeout = [...run.facts];
    await run.settle(['slow', 'resolve', { set: { input: 'too late' } }]);
    expect(run.actor.getSnapshot().output).toEqual(output);
    expect(output.context.input).toBe('quick');
    expect(run.facts).toEqual(factsAtTimeout);
    expect(factsAtTimeout[1]).toEqual({
      type: 'StageHandlerTimedOut',
      data: { stage: 'on_input', handlerId: 'slow', plugin: 'p-slow', timeoutMs: 1_000 },
    });
  });

  it('short-circuits when a handler answers, and only then', async () => {
    const answered = runStage(onInput([global('rate-limit'), global('audit')]));
    await answered.settle(['audit', 'resolve'], ['rate-limit', 'resolve', { response: 'slow down' }]);
    const output = await answered.output();
    expect(output.shortCircuit).toBe(true);
    expect(output.context.response).toBe('slow down');
    expect(answered.facts.at(-1)).toEqual({
      type: 'StageCompleted',
      data: { stage: 'on_input', shortCircuit: true, changedBy: ['rate-limit'] },
    });

    const quiet = runStage(onInput([global('rewrite')]));
    await quiet.settle(['rewrite', 'resolve', { set: { input: 'x' } }]);
    expect((await quiet.output()).shortCircuit).toBe(false);
  });

  it("runs own_tools handlers only around their own plugin's tools", async () => {
    const handlers = [global('audit', 'guard'), ownTools('mine', 'files'), ownTools('theirs', 'qq')];
    const own = runStage(toolStage('before_toolcall', handlers));
    expect(own.started).toEqual(['audit', 'mine']);
    await own.settle(['audit', 'resolve'], ['mine', 'resolve']);
    expect((await own.output()).outcomes.map((o) => [o.handlerId, o.status, o.reason])).toEqual([
      ['audit', 'unchanged', undefined],
      ['mine', 'unchanged', undefined],
      ['theirs', 'skipped', "tool 'files_read' belongs to plugin 'files'"],
    ]);
    expect(own.facts[2]).toEqual({
      type: 'StageHandlerSkipped',
      data: { stage: 'before_toolcall', handlerId: 'theirs', plugin: 'qq', reason: "tool 'files_read' belongs to plugin 'files'" },
    });

    const foreignTool = runStage(toolStage('after_toolcall', handlers, { scope: { toolName: 'qq_send', ownerPlugin: 'qq' } }));
    expect(foreignTool.started).toEqual(['audit', 'theirs']);

    const notATool = runStage(onInput(handlers));
    expect(notATool.started).toEqual(['audit']);
    await notATool.settle(['audit', 'resolve']);
    expect((await notATool.output()).outcomes.map((o) => o.reason)).toEqual([
      undefined,
      'own_tools handlers run only in before_toolcall and after_toolcall, not in on_input',
      'own_tools handlers run only in before_toolcall and after_toolcall, not in on_input',
    ]);
  });

  it('lets before_toolcall audit, rewrite arguments key by key, and deny with the first reason', async () => {
    const run = runStage(
      toolStage('before_toolcall', [global('audit'), global('jail'), global('cap'), global('deny-1'), global('deny-2')]),
    );
    await run.settle(
      ['deny-2', 'resolve', { deny: { reason: 'second opinion' } }],
      ['cap', 'resolve', { rewriteArgs: { limit: 5 } }],
      ['jail', 'resolve', { rewriteArgs: { path: '/sandbox/passwd', limit: 100 } }],
      ['deny-1', 'resolve', { deny: { reason: 'path outside the sandbox' } }],
      ['audit', 'resolve', {}],
    );
    const output = await run.output();
    expect(output.outcomes.map((o) => o.status)).toEqual(['unchanged', 'changed', 'changed', 'changed', 'changed']);
    expect(output.context.toolCall).toEqual({ id: 'call-1', name: 'files_read', args: { path: '/sandbox/passwd', limit: 5 } });
    expect(output.context.denial).toEqual({ handlerId: 'deny-1', reason: 'path outside the sandbox' });
    expect(output.shortCircuit).toBe(false);
  });

  it('lets after_toolcall replace and redact the result, and a replacement never undoes a redaction', async () => {
    const run = runStage(toolStage('after_toolcall', [global('redactor'), global('sorter')]));
    await run.settle(
      ['redactor', 'resolve', { redact: [{ find: 'abc123', replaceWith: '[redacted]' }] }],
      ['sorter', 'resolve', { set: { toolResult: 'token=abc123 user=root' } }],
    );
    const output = await run.output();
    expect(output.context.toolResult).toBe('token=[redacted] user=root');
    expect(output.outcomes.map((o) => o.status)).toEqual(['changed', 'changed']);
  });

  it('lists outcomes and facts in handler order, whatever order handlers settle in', async () => {
    const run = runStage(
      toolStage('after_toolcall', [global('changes'), global('audits'), global('throws'), global('hangs'), ownTools('foreign', 'qq')]),
    );
    await run.settle(['throws', 'reject', 'boom'], ['audits', 'resolve', null], ['changes', 'resolve', { set: { toolResult: 'ok' } }]);
    run.clock.increment(1_000);
    const output = await run.output();
    expect(output.outcomes.map((o) => [o.handlerId, o.status])).toEqual([
      ['changes', 'changed'],
      ['audits', 'unchanged'],
      ['throws', 'failed'],
      ['hangs', 'timed_out'],
      ['foreign', 'skipped'],
    ]);
    expect(output.outcomes[2]!.error).toBe('boom');
    expect(run.facts.map((f: StageFact) => f.type)).toEqual([
      'StageHandlerChanged',
      'StageHandlerUnchanged',
      'StageHandlerFailed',
      'StageHandlerTimedOut',
      'StageHandlerSkipped',
      'StageCompleted',
    ]);
  });

  it('refuses a change the stage does not admit, as that handler failing, with what was wrong', async () => {
    const run = runStage(onInput([global('misplaced'), global('malformed'), global('unknown'), global('ok')]));
    await run.settle(
      ['misplaced', 'resolve', { rewriteArgs: { path: '/' } }],
      ['malformed', 'resolve', { set: { input: 42 } }],
      ['unknown', 'resolve', { reply: 'hi' }],
      ['ok', 'resolve', { set: { input: 'fine' } }],
    );
    const output = await run.output();
    expect(output.outcomes.map((o) => o.error)).toEqual([
      "refused change: 'rewriteArgs' is not allowed in on_input (allowed: set, response)",
      'refused change: set.input must be a string, got a number',
      "refused change: unknown change 'reply' (changes: set, inject, response, deny, rewriteArgs, redact)",
      undefined,
    ]);
    expect(output.context.input).toBe('fine');

    const readOnly = runStage({ stage: 'after_output', context: createStageContext('hi'), handlers: [global('stats')], timeoutMs: 50 });
    await readOnly.settle(['stats', 'resolve', { response: 'again' }]);
    const after = await readOnly.output();
    expect(after.outcomes[0]!.error).toBe("refused change: after_output is read-only, but the handler returned 'response'");
    expect(after.shortCircuit).toBe(false);
  });

  it('appends pre_action injections in handler order', () => {
    const merged = mergeChanges(createStageContext('q', { injected: ['persona'] }), [
      { handlerId: 'weather', change: { inject: ['it rains'] } },
      { handlerId: 'calendar', change: { inject: ['meeting at 3', 'dentist at 5'] } },
    ]);
    expect(merged.injected).toEqual(['persona', 'it rains', 'meeting at 3', 'dentist at 5']);
  });

  it('completes at once when no handler applies', async () => {
    const run = runStage(onInput([ownTools('mine', 'files')]));
    expect(run.actor.getSnapshot().status).toBe('done');
    expect(run.facts.map((f) => f.type)).toEqual(['StageHandlerSkipped', 'StageCompleted']);
  });

  it('fails each handler with a clear error when no handler logic was provided', async () => {
    const actor = createActor(stagePipelineMachine, { input: onInput([global('a')]), clock: new SimulatedClock() }).start();
    const output = await toPromise(actor);
    expect(output.outcomes[0]!.error).toBe("no handler logic was provided to the stage pipeline (handler 'a')");
  });

  it('runs as a child of a turn machine, which reads the output when the stage is done', async () => {
    const turn = setup({
      types: { context: {} as { ran: StagePipelineOutput | null } },
      actors: { stage: stagePipelineMachine },
    }).createMachine({
      context: { ran: null },
      initial: 'onInput',
      states: {
        onInput: {
          invoke: {
            src: 'stage',
            input: onInput([global('a')]),
            onDone: { target: 'done', actions: assign({ ran: ({ event }) => event.output }) },
          },
        },
        done: { type: 'final' },
      },
    });
    const handler = fromPromise<HandlerResolution, HandlerInput>(async () => ({ response: 'answered' }));
    const actor = createActor(turn.provide({ actors: { stage: stagePipelineMachine.provide({ actors: { handler } }) } }), {
      clock: new SimulatedClock(),
    });
    actor.start();
    await toPromise(actor);
    expect(actor.getSnapshot().context.ran).toMatchObject({ stage: 'on_input', shortCircuit: true, context: { response: 'answered' } });
  });

  it('refuses a tool stage without its tool, and duplicate handler ids', async () => {
    const start = (input: StagePipelineInput) => {
      const actor = createActor(stagePipelineMachine, { input, clock: new SimulatedClock() });
      const done = toPromise(actor); // observes the error before start, as a parent actor would
      actor.start();
      return done;
    };
    await expect(start(toolStage('before_toolcall', [], { scope: undefined }))).rejects.toThrow(
      'cannot run the stage: before_toolcall needs context.toolCall and scope (the tool and the plugin that owns it)',
    );
    await expect(start(onInput([global('a'), global('a')]))).rejects.toBeInstanceOf(StageInputError);
  });
});
