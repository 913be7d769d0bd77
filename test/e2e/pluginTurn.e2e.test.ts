/**
 * The whole path through homed: waiter sends a message over the cli socket, the scheduler
 * starts it, the turn asks the LLM (the local test server), the model calls a plugin tool
 * twice, the plugin's before_toolcall handler denies one call and rewrites the other, the
 * model answers, and the reply streams back to waiter in chunks. Then the LLM server is gone
 * and `homed replay --verify` reproduces the turn from the log alone.
 */
import { describe, expect, it } from 'vitest';
import { askSocket, logOf, testDataDir, useDaemons } from '../support/homedSession.ts';
import { startLlmServer, type LlmServer } from '../support/llmServer/index.ts';
import { finished, runHomed, spawnNode, WAITER } from '../support/processes.ts';
import { useTempDir } from '../support/tempDir.ts';

const tempDir = useTempDir();
const daemons = useDaemons();

const prepare = (
  server: LlmServer,
  sources: readonly Record<string, unknown>[] = [
    { name: 'local', adapter: 'openai', baseUrl: server.baseUrl('openai'), model: 'test-model' },
  ],
) => testDataDir(tempDir(), { sources, plugins: ['gatekeeper'] });

describe('a turn through homed with a plugin', () => {
  it("denies and rewrites tool calls in the plugin's before_toolcall, streams the answer to waiter, and replays without the model", async () => {
    const server = await startLlmServer([
      {
        toolCalls: [
          { id: 'call_a', name: 'lookup', arguments: { q: 'secret' } },
          { id: 'call_b', name: 'lookup', arguments: { q: 'draft' } },
        ],
      },
      { text: 'The secret stays secret, and the final word is in.' },
      { text: 'Second answer, streamed in pieces for the raw client.', slow: { chunkDelayMs: 30 } },
    ]);
    daemons.onCleanup(() => server.close());
    const dir = prepare(server);
    await daemons.start(dir);

    const tools = await finished(spawnNode([WAITER, '--data', dir, '--tools']));
    expect(tools.stdout).toMatch(/^lookup\s+gatekeeper\s+Looks a word up$/m);

    const waiter = await finished(spawnNode([WAITER, '--data', dir, 'Look up the secret and the draft']));
    expect(waiter.stderr).toBe('');
    expect(waiter.code).toBe(0);
    expect(waiter.stdout).toBe('The secret stays secret, and the final word is in.\n');

    // The model saw the denial and the result of the rewritten call.
    const second = JSON.stringify(server.requests[1]!.body);
    expect(second).toContain('secrets are not looked up');
    expect(second).toContain('looked up final');
    expect(second).not.toContain('looked up draft');

    const replies = await askSocket(dir, 'again');
    // The same person's conversation goes on: the earlier exchange is in the context the model gets.
    const third = JSON.stringify(server.requests[2]!.body);
    expect(third).toContain('Look up the secret and the draft');
    expect(third).toContain('The secret stays secret, and the final word is in.');
    const chunks = replies.filter((r) => r.type === 'chunk');
    expect(chunks.length).toBeGreaterThan(1);
    expect(chunks.map((c) => c.text).join('')).toBe('Second answer, streamed in pieces for the raw client.');

    const log = await logOf(dir);
    const types = log.map((e) => e.type);
    expect(types).toEqual(
      expect.arrayContaining(['PluginToolRegistered', 'PluginStageRegistered', 'InputQueued', 'TaskStarted', 'TaskCompleted']),
    );
    expect(log.find((e) => e.type === 'ToolCallDenied')!.data).toMatchObject({ callId: 'call_a', reason: 'secrets are not looked up' });
    expect(log.find((e) => e.type === 'ToolCallRewritten')!.data).toMatchObject({
      callId: 'call_b',
      from: { q: 'draft' },
      to: { q: 'final' },
    });
    expect(log.filter((e) => e.type === 'TaskCompleted').map((e) => e.data.outcome)).toEqual(['done', 'done']);

    await server.close();
    const verify = await runHomed(['replay', '--data', dir, '--verify']);
    expect(verify.stdout).toContain('turns: 2 of 2 journals match');
    expect(verify.code).toBe(0);
  });

  it('a stop pressed during streaming aborts the HTTP request at once after the StopRequested event', async () => {
    const server = await startLlmServer([
      { text: 'one two three four five six seven eight nine ten eleven twelve', slow: { chunkDelayMs: 300 } },
    ]);
    daemons.onCleanup(() => server.close());
    const dir = prepare(server);
    await daemons.start(dir);
    const waiter = spawnNode([WAITER, '--data', dir, 'count slowly']);
    const conversation = finished(waiter);
    await new Promise<void>((resolve) => waiter.stdout!.once('data', () => resolve())); // streaming has begun
    const stop = await finished(spawnNode([WAITER, '--data', dir, '--stop']));
    expect(stop.stdout).toBe('stopped the running task\n');
    const record = await server.settled(0);
    expect(record.outcome).toBe('aborted');
    const log = await logOf(dir);
    const stopEvent = log.find((e) => e.type === 'StopRequested')!;
    const abortedAtWallClock = performance.timeOrigin + record.abortedAt!;
    // At once: tens of ms when idle; the bound leaves room for a loaded CI machine.
    expect(abortedAtWallClock - (stopEvent.data.at as number)).toBeLessThan(1_000);
    const result = await conversation;
    expect(result.code).toBe(1); // not an answer
    expect(result.stdout).toContain('(cancelled)');
    expect(result.stderr).toContain('the turn was stopped before it finished');
    expect(log.filter((e) => e.type === 'TurnCompleted').map((e) => e.data.outcome)).toEqual(['cancelled']);
    await expect.poll(async () => (await logOf(dir, '--type', 'TaskCompleted')).map((e) => e.data.outcome)).toEqual(['cancelled']);
  });

  it('falls through a source that answers 401 to the next one', async () => {
    const server = await startLlmServer([{ status: 401, message: 'bad key' }, { text: 'From the second source.' }]);
    daemons.onCleanup(() => server.close());
    const dir = prepare(server, [
      { name: 'first', adapter: 'openai', baseUrl: server.baseUrl('openai'), model: 'm', apiKey: 'sk-wrong' },
      { name: 'second', adapter: 'ollama', baseUrl: server.baseUrl('ollama'), model: 'm' },
    ]);
    await daemons.start(dir);
    const waiter = await finished(spawnNode([WAITER, '--data', dir, 'hello']));
    expect(waiter.stdout).toBe('From the second source.\n');
    expect(server.requests.map((r) => [r.protocol, r.status])).toEqual([
      ['openai', 401],
      ['ollama', 200],
    ]);
    const log = await logOf(dir, '--type', 'LlmAnswerRecorded');
    expect(log[0]!.data.source).toBe('second');
    expect(JSON.stringify(log)).not.toContain('sk-wrong');
  });
});
