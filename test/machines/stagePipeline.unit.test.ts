import { describe, expect, it } from 'vitest';
import {
  STAGES,
  StageInputError,
  createStageContext,
  mergeChanges,
  startStageRun,
  type HandlerRef,
  type StagePipelineInput,
} from '../../machines/stagePipeline/index.ts';
import { runStage } from '../support/stageHarness.ts';

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

describe('a stage run', () => {
  it('names the seven stages in turn order', () => {
    expect(STAGES).toEqual(['on_input', 'pre_action', 'post_action', 'before_toolcall', 'after_toolcall', 'before_output', 'after_output']);
  });

  it('starts every applicable handler before any of them settles, each on the same context', async () => {
    const run = runStage(onInput([global('a'), global('b'), global('c')]));
    expect(run.started).toEqual(['a', 'b', 'c']);
    expect(run.seen.map((s) => s.context)).toEqual([onInput([]).context, onInput([]).context, onInput([]).context]);
    expect(run.seen[0]).toMatchObject({ handlerId: 'a', stage: 'on_input' });
    expect(run.done()).toBe(false);
    run.settle(['c', 'resolve'], ['b', 'resolve'], ['a', 'resolve']);
    expect(run.output().outcomes.map((o) => o.status)).toEqual(['unchanged', 'unchanged', 'unchanged']);
  });

  it('keeps what a handler does to its copy of the context out of the result: only changes count', async () => {
    const run = runStage(onInput([global('sneaky'), global('honest')]));
    (run.seen[0]!.context as { input: string }).input = 'mutated in place';
    run.settle(['sneaky', 'resolve'], ['honest', 'resolve']);
    expect(run.seen[1]!.context.input).toBe('hello');
    expect(run.output().context.input).toBe('hello');
  });

  it('merges changes in handler order, whatever order they complete in', async () => {
    const handlers = [global('first'), global('second')];
    const byCompletion = async (order: ['first' | 'second', 'first' | 'second']) => {
      const run = runStage(onInput(handlers));
      run.settle(...order.map((id) => [id, 'resolve', { set: { input: `rewritten by ${id}` } }] as [string, 'resolve', unknown]));
      return run.output();
    };
    const secondFinishedFirst = await byCompletion(['second', 'first']);
    const firstFinishedFirst = await byCompletion(['first', 'second']);
    expect(secondFinishedFirst.context.input).toBe('rewritten by second');
    expect(secondFinishedFirst).toEqual(firstFinishedFirst);
  });

  it('records a rejecting handler as failed and keeps the others', async () => {
    const run = runStage(onInput([global('broken'), global('fine')]));
    run.settle(['broken', 'reject', new Error('plugin crashed')], ['fine', 'resolve', { set: { input: 'cleaned' } }]);
    const output = run.output();
    expect(output.outcomes).toEqual([
      { handlerId: 'broken', plugin: 'p-broken', status: 'failed', error: 'plugin crashed' },
      { handlerId: 'fine', plugin: 'p-fine', status: 'changed', change: { set: { input: 'cleaned' } } },
    ]);
    expect(output.context.input).toBe('cleaned');
  });

  it('times a handler out when its time has passed and ignores its late result', async () => {
    const run = runStage(onInput([global('quick'), global('slow')]));
    run.settle(['quick', 'resolve', { set: { input: 'quick' } }]);
    run.advance(999);
    expect(run.done()).toBe(false);
    run.advance(1);
    const output = run.output();
    expect(output.outcomes[1]).toEqual({ handlerId: 'slow', plugin: 'p-slow', status: 'timed_out', error: 'no result within 1000 ms' });
    run.settle(['slow', 'resolve', { set: { input: 'too late' } }]);
    expect(run.output()).toEqual(output);
    expect(output.context.input).toBe('quick');
  });

  it('short-circuits when a handler answers, and only then', async () => {
    const answered = runStage(onInput([global('rate-limit'), global('audit')]));
    answered.settle(['audit', 'resolve'], ['rate-limit', 'resolve', { response: 'slow down' }]);
    const output = answered.output();
    expect(output.shortCircuit).toBe(true);
    expect(output.context.response).toBe('slow down');
    expect(output.outcomes.filter((o) => o.status === 'changed').map((o) => o.handlerId)).toEqual(['rate-limit']);

    const quiet = runStage(onInput([global('rewrite')]));
    quiet.settle(['rewrite', 'resolve', { set: { input: 'x' } }]);
    expect(quiet.output().shortCircuit).toBe(false);
  });

  it("runs own_tools handlers only around their own plugin's tools", async () => {
    const handlers = [global('audit', 'guard'), ownTools('mine', 'files'), ownTools('theirs', 'qq')];
    const own = runStage(toolStage('before_toolcall', handlers));
    expect(own.started).toEqual(['audit', 'mine']);
    own.settle(['audit', 'resolve'], ['mine', 'resolve']);
    expect(own.output().outcomes.map((o) => [o.handlerId, o.status, o.reason])).toEqual([
      ['audit', 'unchanged', undefined],
      ['mine', 'unchanged', undefined],
      ['theirs', 'skipped', "tool 'files_read' belongs to plugin 'files'"],
    ]);

    const foreignTool = runStage(toolStage('after_toolcall', handlers, { scope: { toolName: 'qq_send', ownerPlugin: 'qq' } }));
    expect(foreignTool.started).toEqual(['audit', 'theirs']);

    const notATool = runStage(onInput(handlers));
    expect(notATool.started).toEqual(['audit']);
    notATool.settle(['audit', 'resolve']);
    expect(notATool.output().outcomes.map((o) => o.reason)).toEqual([
      undefined,
      'own_tools handlers run only in before_toolcall and after_toolcall, not in on_input',
      'own_tools handlers run only in before_toolcall and after_toolcall, not in on_input',
    ]);
  });

  it('lets before_toolcall audit, rewrite arguments key by key, and deny with the first reason', async () => {
    const run = runStage(
      toolStage('before_toolcall', [global('audit'), global('jail'), global('cap'), global('deny-1'), global('deny-2')]),
    );
    run.settle(
      ['deny-2', 'resolve', { deny: { reason: 'second opinion' } }],
      ['cap', 'resolve', { rewriteArgs: { limit: 5 } }],
      ['jail', 'resolve', { rewriteArgs: { path: '/sandbox/passwd', limit: 100 } }],
      ['deny-1', 'resolve', { deny: { reason: 'path outside the sandbox' } }],
      ['audit', 'resolve', {}],
    );
    const output = run.output();
    expect(output.outcomes.map((o) => o.status)).toEqual(['unchanged', 'changed', 'changed', 'changed', 'changed']);
    expect(output.context.toolCall).toEqual({ id: 'call-1', name: 'files_read', args: { path: '/sandbox/passwd', limit: 5 } });
    expect(output.context.denial).toEqual({ handlerId: 'deny-1', reason: 'path outside the sandbox' });
    expect(output.shortCircuit).toBe(false);
  });

  it('lets after_toolcall replace and redact the result, and a replacement never undoes a redaction', async () => {
    const run = runStage(toolStage('after_toolcall', [global('redactor'), global('sorter')]));
    run.settle(
      ['redactor', 'resolve', { redact: [{ find: 'abc123', replaceWith: '[redacted]' }] }],
      ['sorter', 'resolve', { set: { toolResult: 'token=abc123 user=root' } }],
    );
    const output = run.output();
    expect(output.context.toolResult).toBe('token=[redacted] user=root');
    expect(output.outcomes.map((o) => o.status)).toEqual(['changed', 'changed']);
  });

  it('lists outcomes and facts in handler order, whatever order handlers settle in', async () => {
    const run = runStage(
      toolStage('after_toolcall', [global('changes'), global('audits'), global('throws'), global('hangs'), ownTools('foreign', 'qq')]),
    );
    run.settle(['throws', 'reject', 'boom'], ['audits', 'resolve', null], ['changes', 'resolve', { set: { toolResult: 'ok' } }]);
    run.advance(1_000);
    const output = run.output();
    expect(output.outcomes.map((o) => [o.handlerId, o.status])).toEqual([
      ['changes', 'changed'],
      ['audits', 'unchanged'],
      ['throws', 'failed'],
      ['hangs', 'timed_out'],
      ['foreign', 'skipped'],
    ]);
    expect(output.outcomes[2]!.error).toBe('boom');
  });

  it('refuses a change the stage does not admit, as that handler failing, with what was wrong', async () => {
    const run = runStage(onInput([global('misplaced'), global('malformed'), global('unknown'), global('ok')]));
    run.settle(
      ['misplaced', 'resolve', { rewriteArgs: { path: '/' } }],
      ['malformed', 'resolve', { set: { input: 42 } }],
      ['unknown', 'resolve', { reply: 'hi' }],
      ['ok', 'resolve', { set: { input: 'fine' } }],
    );
    const output = run.output();
    expect(output.outcomes.map((o) => o.error)).toEqual([
      "refused change: 'rewriteArgs' is not allowed in on_input (allowed: set, response)",
      'refused change: set.input must be a string, got a number',
      "refused change: unknown change 'reply' (changes: set, inject, response, deny, askApproval, rewriteArgs, redact)",
      undefined,
    ]);
    expect(output.context.input).toBe('fine');

    const readOnly = runStage({ stage: 'after_output', context: createStageContext('hi'), handlers: [global('stats')], timeoutMs: 50 });
    readOnly.settle(['stats', 'resolve', { response: 'again' }]);
    const after = readOnly.output();
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
    expect(run.done()).toBe(true);
    expect(run.started).toEqual([]);
    expect(run.output().outcomes.map((o) => o.status)).toEqual(['skipped']);
  });

  it('refuses a tool stage without its tool, and duplicate handler ids', () => {
    expect(() => startStageRun(0, toolStage('before_toolcall', [], { scope: undefined }))).toThrow(
      'cannot run the stage: before_toolcall needs context.toolCall and scope (the tool and the plugin that owns it)',
    );
    expect(() => startStageRun(0, onInput([global('a'), global('a')]))).toThrow(StageInputError);
  });
});
