import { describe, expect, expectTypeOf, it } from 'vitest';
import type { ChatMessage, CompletionResponse, ToolDefinition } from '../../adapters/llm/llmTypes.ts';
import type { HandlerRef } from '../../machines/stagePipeline/index.ts';
import type { LlmAnswer, LlmToolDefinition, TurnMessage } from '../../machines/turn/index.ts';
import { emptyOutputState, foldOutput } from '../../actors/output/outputDeliveries.ts';
import { CHUNK_FRAME_MS } from '../../actors/turn/turnActor.ts';
import { answer, call, deferred, flush, runTurn, tool } from '../support/turnHarness.ts';

const global = (id: string, plugin = 'guard'): HandlerRef => ({ id, plugin, scope: 'global' });
const tools = [tool('files_read'), tool('files_write'), tool('web_fetch', 'web')];

describe('turn machine', () => {
  it('answers without tools: every stage runs once, the reply is sent, facts in order', async () => {
    const run = runTurn({ input: 'hi', messages: [{ role: 'system', content: 'be brief' }], tools }, { llm: () => answer('hello') });
    const out = await run.output();
    expect(out).toMatchObject({ outcome: 'answered', reply: 'hello', rounds: 0 });
    expect(out.messages).toEqual([
      { role: 'system', content: 'be brief' },
      { role: 'user', content: 'hi' },
      { role: 'assistant', content: 'hello' },
    ]);
    // No handler is registered, so no stage is asked anything and none leaves a fact.
    expect(run.types()).toEqual(['LlmRequested', 'OutputSent', 'TurnCompleted']);
    expect(run.of('OutputSent')[0]!.data).toEqual({ text: 'hello', kind: 'answer', streamed: true });
    expect(run.llmCalls[0]!.tools.map((t) => t.name)).toEqual(['files_read', 'files_write', 'web_fetch']);
    expect(run.of('TurnCompleted')[0]!.data).toEqual({ outcome: 'answered', rounds: 0 });
    expect(JSON.parse(JSON.stringify(run.facts))).toEqual(run.facts); // plain JSON
  });

  it('runs one tool round, feeds the result back, then answers', async () => {
    const run = runTurn(
      { input: 'read a', tools },
      {
        llm: (_, n) => (n === 0 ? answer('', [call('c1', 'files_read', { path: 'a' })]) : answer('a says hi')),
        tool: (inv) => ({ content: `contents of ${String(inv.args.path)}` }),
      },
    );
    const out = await run.output();
    expect(out).toMatchObject({ outcome: 'answered', reply: 'a says hi', rounds: 1 });
    expect(run.invocations).toEqual([{ callId: 'c1', name: 'files_read', owner: 'files', args: { path: 'a' } }]);
    expect(run.llmCalls[1]!.messages.slice(-2)).toEqual([
      { role: 'assistant', content: '', toolCalls: [call('c1', 'files_read', { path: 'a' })] },
      { role: 'tool', toolCallId: 'c1', content: 'contents of a' },
    ]);
    expect(run.types()).toContain('ToolCalled');
    expect(run.of('ToolCompleted')[0]!.data).toEqual({ callId: 'c1', name: 'files_read', result: 'contents of a' });
  });

  it('records in each LLM request only the messages the log does not hold yet', async () => {
    const history: TurnMessage[] = [
      { role: 'system', content: 'be brief' },
      { role: 'user', content: 'earlier' },
    ];
    const run = runTurn(
      { input: 'read a', messages: history, tools },
      {
        llm: (_, n) => (n === 0 ? answer('', [call('c1', 'files_read', { path: 'a' })]) : answer('a says hi')),
        tool: () => ({ content: 'contents of a' }),
      },
    );
    await run.output();
    const [first, second] = run.of('LlmRequested').map((f) => f.data);
    expect(first).toEqual({ round: 0, from: 2, added: [{ role: 'user', content: 'read a' }], total: 3, stream: true });
    expect(second).toEqual({
      round: 1,
      from: 3,
      added: [
        { role: 'assistant', content: '', toolCalls: [call('c1', 'files_read', { path: 'a' })] },
        { role: 'tool', toolCallId: 'c1', content: 'contents of a' },
      ],
      total: 5,
      stream: true,
    });
    // What was recorded, put together, is exactly what the model was sent.
    expect([...history, ...first!.added, ...second!.added]).toEqual(run.llmCalls[1]!.messages);
  });

  it('runs the calls of a round in parallel: results land in the conversation in call order, in the log as they came', async () => {
    const first = deferred<{ content: string }>();
    const second = deferred<{ content: string }>();
    const run = runTurn(
      { input: 'both', tools },
      {
        llm: (_, n) =>
          n === 0 ? answer('', [call('c1', 'files_read', { path: 'a' }), call('c2', 'files_read', { path: 'b' })]) : answer('done'),
        tool: (inv) => (inv.callId === 'c1' ? first.promise : second.promise),
      },
    );
    await flush();
    expect(run.invocations.map((i) => i.callId)).toEqual(['c1', 'c2']); // both running, neither settled
    second.resolve({ content: 'B' });
    await flush();
    first.resolve({ content: 'A' });
    const out = await run.output();
    expect(out.messages.filter((m) => m.role === 'tool')).toEqual([
      { role: 'tool', toolCallId: 'c1', content: 'A' },
      { role: 'tool', toolCallId: 'c2', content: 'B' },
    ]);
    expect(run.of('ToolCompleted').map((f) => f.data.callId)).toEqual(['c2', 'c1']);
  });

  // The files plugin's own handler: its rewrite of its own tool's call runs as it is (another plugin's waits: turnSecurity).
  it('denies one call and rewrites another in the same round', async () => {
    const run = runTurn(
      { input: 'go', tools, handlers: { before_toolcall: [global('guard', 'files')] } },
      {
        llm: (_, n) =>
          n === 0
            ? answer('', [call('c1', 'files_write', { path: '/etc/passwd' }), call('c2', 'files_read', { path: 'secret' })])
            : answer('ok'),
        tool: (inv) => ({ content: `read ${String(inv.args.path)}` }),
        handler: ({ context }) =>
          context.toolCall?.name === 'files_write'
            ? { deny: { reason: 'writes outside the workspace' } }
            : { rewriteArgs: { path: 'public' } },
      },
    );
    const out = await run.output();
    expect(run.invocations).toEqual([{ callId: 'c2', name: 'files_read', owner: 'files', args: { path: 'public' } }]);
    expect(out.messages.filter((m) => m.role === 'tool')).toEqual([
      { role: 'tool', toolCallId: 'c1', content: 'Tool call denied: writes outside the workspace' },
      { role: 'tool', toolCallId: 'c2', content: 'read public' },
    ]);
    expect(run.of('ToolCallDenied')[0]!.data).toEqual({
      callId: 'c1',
      name: 'files_write',
      handlerId: 'guard',
      reason: 'writes outside the workspace',
    });
    expect(run.of('ToolCallRewritten')[0]!.data).toEqual({
      callId: 'c2',
      name: 'files_read',
      from: { path: 'secret' },
      to: { path: 'public' },
    });
    expect(out).toMatchObject({ outcome: 'answered', reply: 'ok', rounds: 1 });
  });

  it("gives before_toolcall the owner plugin as scope: an own_tools handler sees only its plugin's tools", async () => {
    const run = runTurn(
      { input: 'go', tools, handlers: { before_toolcall: [{ id: 'web-audit', plugin: 'web', scope: 'own_tools' }] } },
      {
        llm: (_, n) => (n === 0 ? answer('', [call('c1', 'files_read'), call('c2', 'web_fetch')]) : answer('ok')),
        tool: () => ({ content: 'x' }),
      },
    );
    await run.output();
    expect(run.handled.filter((h) => h.stage === 'before_toolcall').map((h) => h.context.toolCall?.name)).toEqual(['web_fetch']);
  });

  it('ends the loop when every call of a round is denied', async () => {
    const run = runTurn(
      { input: 'go', tools, handlers: { before_toolcall: [global('guard')] } },
      {
        llm: () => answer('', [call('c1', 'files_write'), call('c2', 'files_read')]),
        handler: () => ({ deny: { reason: 'read-only mode' } }),
      },
    );
    const out = await run.output();
    expect(out.outcome).toBe('denied');
    expect(out.reply).toContain('denied');
    expect(run.llmCalls).toHaveLength(1);
    expect(run.invocations).toEqual([]);
    expect(run.of('TurnCompleted')[0]!.data).toEqual({ outcome: 'denied', rounds: 1 });
  });

  it('stops at the round limit with a clear reply', async () => {
    const run = runTurn(
      { input: 'loop', tools, maxRounds: 2 },
      { llm: (_, n) => answer('', [call(`c${n}`, 'files_read')]), tool: () => ({ content: 'again' }) },
    );
    const out = await run.output();
    expect(out).toMatchObject({ outcome: 'round_limit', rounds: 2 });
    expect(out.reply).toBe('I stopped after 2 tool rounds (the limit is 2) without reaching a final answer.');
    expect(run.llmCalls).toHaveLength(2);
    expect(run.invocations).toHaveLength(2);
    expect(run.of('OutputSent')[0]!.data.text).toBe(out.reply);
  });

  it('short-circuits in on_input: no LLM call, the answer is sent and after_output runs', async () => {
    const run = runTurn(
      { input: 'spam', tools, handlers: { on_input: [global('blacklist')], after_output: [global('stats')] } },
      { llm: () => answer('never'), handler: ({ stage }) => (stage === 'on_input' ? { response: 'you are blocked' } : null) },
    );
    const out = await run.output();
    expect(out).toMatchObject({ outcome: 'short_circuited', reply: 'you are blocked', rounds: 0 });
    expect(run.llmCalls).toEqual([]);
    expect(run.types()).toEqual(['StageStarted', 'StageRan', 'OutputSent', 'StageStarted', 'StageRan', 'TurnCompleted']);
    expect(run.of('StageRan').map((f) => f.data.stage)).toEqual(['on_input', 'after_output']);
    expect(run.of('OutputSent')[0]!.data).toEqual({ text: 'you are blocked', kind: 'handler', streamed: false });
    expect(run.handled.find((h) => h.stage === 'after_output')?.context.output).toBe('you are blocked');
  });

  it('lets after_toolcall redact a result before the next LLM request sees it', async () => {
    const run = runTurn(
      { input: 'key?', tools, handlers: { after_toolcall: [global('dlp')] } },
      {
        llm: (_, n) => (n === 0 ? answer('', [call('c1', 'files_read', { path: '.env' })]) : answer('redacted')),
        tool: () => ({ content: 'API_KEY=sk-123' }),
        handler: () => ({ redact: [{ find: 'sk-123', replaceWith: '[redacted]' }] }),
      },
    );
    await run.output();
    expect(run.llmCalls[1]!.messages.at(-1)).toEqual({ role: 'tool', toolCallId: 'c1', content: 'API_KEY=[redacted]' });
    expect(JSON.stringify(run.llmCalls[1])).not.toContain('sk-123');
  });

  it('lets post_action drop the tool calls (forced redirect) and before_output format the reply', async () => {
    const run = runTurn(
      { input: 'x', tools, handlers: { post_action: [global('filter')], before_output: [global('fmt')] } },
      {
        llm: () => answer('raw', [call('c1', 'files_read')]),
        handler: ({ stage, context }) =>
          stage === 'post_action'
            ? { set: { toolCalls: [], llmText: 'filtered' } }
            : stage === 'before_output'
              ? { set: { output: `**${context.output}**` } }
              : null,
      },
    );
    const out = await run.output();
    expect(out).toMatchObject({ outcome: 'answered', reply: '**filtered**', rounds: 0 });
    expect(run.invocations).toEqual([]);
    expect(out.messages.at(-1)).toEqual({ role: 'assistant', content: 'filtered' });
  });

  it('short-circuits from a tool stage: the answer of before_toolcall ends the turn', async () => {
    const run = runTurn(
      { input: 'x', tools, handlers: { before_toolcall: [global('guard')] } },
      {
        llm: () => answer('', [call('c1', 'files_read')]),
        tool: () => ({ content: 'x' }),
        handler: () => ({ response: 'not allowed today' }),
      },
    );
    const out = await run.output();
    expect(out).toMatchObject({ outcome: 'short_circuited', reply: 'not allowed today' });
    expect(run.invocations).toEqual([]);
    expect(run.llmCalls).toHaveLength(1);
  });

  it('fails the turn with a clear reply when the LLM rejects', async () => {
    const run = runTurn({ input: 'hi', tools }, { llm: () => Promise.reject(new Error('all providers failed: 401 from openai')) });
    const out = await run.output();
    expect(out).toMatchObject({ outcome: 'failed', reply: 'The model could not answer: all providers failed: 401 from openai' });
    expect(run.of('LlmFailed')[0]!.data.error).toBe('all providers failed: 401 from openai');
    expect(run.of('OutputSent')[0]!.data).toEqual({ text: out.reply, kind: 'failed', streamed: false });
    expect(run.of('TurnCompleted')[0]!.data.outcome).toBe('failed');
  });

  it('fails a turn whose input is more than the window, asking no model, with the reason the runner gave', async () => {
    const why =
      'the message is about 262,000 tokens, and with the instructions it comes with it is more than the 8,192 the model reads at most';
    const run = runTurn({ input: 'r'.repeat(1_048_000), tools, inputTooLong: why }, { llm: () => answer('never') });
    const out = await run.output();
    expect(out).toMatchObject({ outcome: 'failed', reply: `The message was not sent to the model: ${why}.` });
    expect(run.llmCalls).toEqual([]);
    expect(run.of('OutputSent')[0]!.data).toEqual({ text: out.reply, kind: 'failed', streamed: false });
    expect(run.of('TurnCompleted')[0]!.data.outcome).toBe('failed');
  });

  it('cancels on a stop during the LLM call: the llm signal aborts, the user gets a cancellation, only after_output still runs', async () => {
    const run = runTurn(
      { input: 'hi', tools, handlers: { before_output: [global('fmt')], after_output: [global('stats')] } },
      { llm: () => new Promise<never>(() => {}) },
    );
    await flush();
    expect(run.llmSignals).toHaveLength(1);
    await run.turn.stop('stop');
    const out = await run.output();
    expect(out.outcome).toBe('cancelled');
    expect(run.llmSignals[0]!.aborted).toBe(true);
    expect(run.types().slice(-5)).toEqual(['TurnCancelled', 'OutputSent', 'StageStarted', 'StageRan', 'TurnCompleted']);
    expect(run.of('TurnCancelled')[0]!.data).toEqual({ during: 'llm', reason: 'stop' });
    expect(run.of('OutputSent')[0]!.data).toEqual({ text: '', kind: 'cancelled', streamed: false });
    expect(run.handled.map((h) => h.stage)).toEqual(['after_output']);
  });

  it('cancels on a stop during a tool call: the tool signal aborts', async () => {
    const run = runTurn(
      { input: 'hi', tools },
      { llm: () => answer('', [call('c1', 'files_read')]), tool: () => new Promise<never>(() => {}) },
    );
    await flush();
    expect(run.toolSignals).toHaveLength(1);
    await run.turn.stop('stop');
    expect((await run.output()).outcome).toBe('cancelled');
    expect(run.toolSignals[0]!.aborted).toBe(true);
  });

  it('feeds an unknown tool back to the model as an error result instead of crashing', async () => {
    const run = runTurn(
      { input: 'x', tools },
      { llm: (_, n) => (n === 0 ? answer('', [call('c1', 'no_such_tool')]) : answer('sorry')), tool: () => ({ content: 'x' }) },
    );
    const out = await run.output();
    expect(out).toMatchObject({ outcome: 'answered', reply: 'sorry' });
    expect(run.invocations).toEqual([]);
    const fed = run.llmCalls[1]!.messages.at(-1)!;
    expect(fed).toMatchObject({ role: 'tool', toolCallId: 'c1' });
    expect(fed.content).toContain("unknown tool 'no_such_tool'");
    expect(run.of('ToolCompleted')[0]!.data.error).toContain("unknown tool 'no_such_tool'");
  });

  it('feeds a failing tool back as an error result', async () => {
    const run = runTurn(
      { input: 'x', tools },
      {
        llm: (_, n) => (n === 0 ? answer('', [call('c1', 'files_read')]) : answer('it failed')),
        tool: () => Promise.reject(new Error('ENOENT')),
      },
    );
    await run.output();
    expect(run.llmCalls[1]!.messages.at(-1)!.content).toBe("Error: tool 'files_read' failed: ENOENT");
  });

  it("streams the model's pieces to the user only when no post_action or before_output handler could change them", async () => {
    const open = runTurn({ input: 'hi', tools }, { llm: () => answer('hello') });
    await open.output();
    expect(open.of('LlmRequested')[0]!.data.stream).toBe(true);
    const held = runTurn(
      { input: 'hi', tools, handlers: { before_output: [global('redact')] } },
      { llm: () => answer('secret word'), handler: ({ context }) => ({ set: { output: context.output!.replace('secret', '***') } }) },
    );
    const out = await held.output();
    expect(held.of('LlmRequested')[0]!.data.stream).toBe(false);
    expect(held.of('OutputSent')[0]!.data).toEqual({ text: '*** word', kind: 'answer', streamed: false });
    expect(out.reply).toBe('*** word');
  });

  it('records streamed pieces before the answer: the pieces of one frame are one message, an answer carries its last ones', async () => {
    const run: ReturnType<typeof runTurn> = runTurn(
      { input: 'hi', tools },
      {
        llm: async (_c, _n, _s, onDelta) => {
          onDelta('one ');
          onDelta('two ');
          await flush();
          expect(run.timers.armed).toBe(1);
          run.timers.advance(CHUNK_FRAME_MS);
          await flush();
          onDelta('three');
          return answer('one two three');
        },
      },
    );
    await run.output();
    const events = await run.store.readStream(run.stream);
    const chunks = events.filter((e) => e.type === 'LlmChunkRecorded').map((e) => e.data);
    expect(chunks).toEqual([{ round: 0, index: 0, text: 'one two ' }]);
    const types = events.map((e) => e.type);
    expect(types.indexOf('LlmAnswerRecorded')).toBeGreaterThan(types.indexOf('LlmChunkRecorded'));
    // What the user receives: the recorded piece, then the rest of the answer.
    const output = emptyOutputState();
    output.streamRoutes.set(run.stream, { channel: 'cli', target: null });
    const received = events.flatMap((e) => foldOutput(output, e));
    expect(received.map((d) => [d.kind, d.text])).toEqual([
      ['chunk', 'one two '],
      ['chunk', 'three'],
      ['end', ''],
    ]);
  });

  it('times a stage out when the timer it armed fires, and journals no late answer', async () => {
    const late = deferred<null>();
    const run = runTurn(
      { input: 'hi', tools, handlers: { on_input: [global('slow')] }, stageTimeoutMs: 1_000 },
      { llm: () => answer('hello'), handler: () => late.promise },
    );
    await flush();
    expect(run.timers.armed).toBe(1);
    run.timers.advance(999);
    await flush();
    expect(run.types()).toEqual(['StageStarted']);
    run.timers.advance(1);
    const out = await run.output();
    expect(out.reply).toBe('hello');
    expect(run.of('StageRan')[0]!.data.outcomes).toEqual([
      { handlerId: 'slow', plugin: 'guard', status: 'timed_out', error: 'no result within 1000 ms' },
    ]);
    const before = (await run.store.readStream(run.stream)).length;
    late.resolve(null);
    await flush();
    expect((await run.store.readStream(run.stream)).length).toBe(before);
  });

  it('answers a preemption with a preempted output (the task runs again later), not a cancellation', async () => {
    const run = runTurn({ input: 'hi', tools }, { llm: () => new Promise<never>(() => {}) });
    await flush();
    await run.turn.stop('preempted');
    expect((await run.output()).outcome).toBe('cancelled');
    expect(run.of('OutputSent')[0]!.data.kind).toBe('preempted');
    expect(run.of('TurnCancelled')[0]!.data.reason).toBe('preempted');
  });

  it("decides an output channel's send itself: checked, recorded as called and completed, never run as a plugin tool", async () => {
    const cli = { name: 'cli', owner: 'cli', capabilities: 1, metaDoc: '' };
    const run = runTurn(
      { input: 'tell them', tools, channels: [cli] },
      {
        llm: (_, n) =>
          n === 0
            ? answer('', [
                call('c1', 'output_send__cli', { payload: 'hi there', type: 'text' }),
                call('c2', 'output_send__cli', { payload: 3, type: 'text' }),
              ])
            : answer('sent'),
      },
    );
    await run.output();
    expect(run.invocations).toEqual([]);
    expect(run.of('ToolCalled').map((f) => f.data.callId)).toEqual(['c1']);
    expect(run.of('ToolCompleted').map((f) => [f.data.callId, f.data.result])).toEqual([
      ['c1', "sent to 'cli'"],
      ['c2', 'payload must be a string'],
    ]);
  });

  it('replays from its journal alone: the same messages give the same facts, byte for byte', async () => {
    const run = runTurn(
      { input: 'go', tools, handlers: { before_toolcall: [global('guard')], after_output: [global('stats')] } },
      {
        llm: (_, n) => (n === 0 ? answer('', [call('c1', 'files_read', { path: 'a' }), call('c2', 'files_write')]) : answer('ok')),
        tool: () => ({ content: 'contents' }),
        handler: ({ context }) => (context.toolCall?.name === 'files_write' ? { deny: { reason: 'no' } } : null),
      },
    );
    await run.output();
    const replay = await run.replay();
    expect(replay.divergence).toBeNull();
    expect(replay.snapshot.status).toBe('done');
    const other = await run.replay({ ...run.toolset, handlers: {} });
    expect(other.divergence).not.toBeNull();
  });

  it('uses LLM-facing types compatible with adapters/llm', () => {
    expectTypeOf<CompletionResponse>().toMatchTypeOf<LlmAnswer>();
    expectTypeOf<TurnMessage>().toMatchTypeOf<ChatMessage>();
    expectTypeOf<ChatMessage>().toMatchTypeOf<TurnMessage>();
    expectTypeOf<LlmToolDefinition>().toMatchTypeOf<ToolDefinition>();
  });
});
