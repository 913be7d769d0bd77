/**
 * The turn's journal through homed, as a user meets it: a plugin that rewrites every reply and
 * one that answers an input itself (the user gets exactly what the log says was sent, and memory
 * keeps that), and the ordinary ways a turn ends early — the stop button, a daemon shut down, a
 * person's message preempting a plugin's turn, a SIGKILL with inputs waiting — after each of
 * which `homed replay --verify` passes and the daemon goes on answering.
 */
import { createConnection } from 'node:net';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { describe, expect, it } from 'vitest';
import { askSocket, logOf, testDataDir, useDaemons, verifyReplay, type CliReply } from '../support/homedSession.ts';
import { lastUserText, messagesOf, startLlmServer, type ScriptEntry } from '../support/llmServer/index.ts';
import { finished, spawnNode, WAITER } from '../support/processes.ts';
import { useTempDir } from '../support/tempDir.ts';

const tempDir = useTempDir();
const daemons = useDaemons();

const when = (text: string, reply: ScriptEntry & object): ScriptEntry => ({ when: (r) => lastUserText(r) === text, reply: reply as never });

const SLOW = { chunkDelayMs: 250 };

/** The pieces of the first turn's answer the log holds, put together: what reached its user before it stopped. */
const firstTurnPieces = async (dir: string): Promise<string> => {
  const [first] = await logOf(dir, '--type', 'TurnRequested');
  return (await logOf(dir, '--stream', first!.stream, '--type', 'LlmChunkRecorded')).map((e) => e.data.text).join('');
};

describe('what leaves a turn comes from its journal', () => {
  it("sends exactly the plugin's rewrite and the plugin's own answer, and memory keeps what was sent", async () => {
    const server = await startLlmServer([when('tell me the secret', { text: 'The secret is out.' })]);
    daemons.onCleanup(() => server.close());
    const dir = testDataDir(tempDir(), { llm: server, plugins: ['redactor'] });
    await daemons.start(dir);

    const rewritten = await askSocket(dir, 'tell me the secret');
    expect(rewritten).toEqual([
      expect.objectContaining({ type: 'accepted' }),
      { type: 'chunk', text: 'The [redacted] is out.', inputId: rewritten[0]!.inputId },
      { type: 'end', text: '', outcome: 'answer', inputId: rewritten[0]!.inputId },
    ]);
    const answered = await askSocket(dir, 'ping');
    expect(answered.slice(1)).toEqual([
      { type: 'chunk', text: 'pong from the plugin', inputId: answered[0]!.inputId },
      { type: 'end', text: '', outcome: 'handler', inputId: answered[0]!.inputId },
    ]);
    expect(server.requests).toHaveLength(1); // the plugin answered ping without the model

    const waiter = await finished(spawnNode([WAITER, '--data', dir, 'ping']));
    expect(waiter.stdout).toBe('pong from the plugin\n');
    const agent = (await logOf(dir, '--type', 'ContextEventAppended'))
      .map((e) => e.data.event as { role: string; text: string })
      .filter((e) => e.role === 'agent')
      .map((e) => e.text);
    expect(agent).toEqual(['The [redacted] is out.', 'pong from the plugin', 'pong from the plugin']);
    expect(JSON.stringify(await logOf(dir, '--type', 'ContextEventAppended'))).not.toContain('The secret is out');
    await server.close();
    await verifyReplay(dir);
  });

  it('memory keeps an input as on_input left it, and the model is asked with that', async () => {
    const server = await startLlmServer([{ text: 'Noted.' }]);
    daemons.onCleanup(() => server.close());
    const dir = testDataDir(tempDir(), { llm: server, plugins: ['redactor'] });
    await daemons.start(dir);
    expect((await askSocket(dir, 'my password: hunter2')).at(-1)).toMatchObject({ outcome: 'answer' });
    expect(lastUserText(server.requests[0]!)).toBe('my password: [redacted]');
    const memory = (await logOf(dir, '--type', 'ContextEventAppended')).map((e) => e.data.event as { role: string; text: string });
    expect(memory.map((e) => [e.role, e.text])).toEqual([
      ['user', 'my password: [redacted]'],
      ['agent', 'Noted.'],
    ]);
    await verifyReplay(dir);
  });

  it('a stop pressed mid-stream is recorded with what was sent, answered as a cancellation, kept in memory, and replays', async () => {
    const server = await startLlmServer([
      // About 10 s of stream: waiter --stop lands mid-stream even when it starts slowly on a loaded machine.
      { text: Array.from({ length: 40 }, (_, i) => `word${i}`).join(' '), slow: SLOW },
      { text: 'After the stop.' },
    ]);
    daemons.onCleanup(() => server.close());
    const dir = testDataDir(tempDir(), { llm: server });
    await daemons.start(dir);
    let streaming!: () => void;
    const started = new Promise<void>((resolve) => (streaming = resolve));
    const replies = askSocket(dir, 'count slowly', (r) => r.type === 'chunk' && streaming());
    await started;
    expect((await finished(spawnNode([WAITER, '--data', dir, '--stop']))).stdout).toBe('stopped the running task\n');
    const received = await replies;
    expect(received.at(-1)).toEqual({
      type: 'end',
      text: '(cancelled)',
      outcome: 'cancelled',
      stoppedFor: 'stop',
      inputId: expect.any(String),
    });
    // The log says what the person saw: the pieces committed before the stop, no more, no less.
    const seen = received.flatMap((r) => (r.type === 'chunk' ? [r.text] : [])).join('');
    expect(seen).toMatch(/^word0 /);
    expect(seen).not.toContain('word39');
    expect((await logOf(dir, '--type', 'LlmChunkRecorded')).map((e) => e.data.text).join('')).toBe(seen);
    expect((await logOf(dir, '--type', 'OutputSent')).map((e) => e.data)).toEqual([{ text: seen, kind: 'cancelled', streamed: true }]);
    const turn = await logOf(dir, '--type', 'TurnStopRequested', '--type', 'TurnCompleted', '--type', 'TaskCompleted');
    expect(turn.map((e) => [e.type, e.data.reason ?? e.data.outcome])).toEqual([
      ['TurnStopRequested', 'stop'],
      ['TurnCompleted', 'cancelled'],
      ['TaskCompleted', 'cancelled'],
    ]);
    // With nothing left, a stop says so rather than 'stopped'.
    expect((await finished(spawnNode([WAITER, '--data', dir, '--stop']))).stdout).toBe('nothing was running or waiting\n');
    expect((await finished(spawnNode([WAITER, '--data', dir, 'and now?']))).stdout).toBe('After the stop.\n');
    // The next turn's history holds the stopped reply as far as it was sent.
    const history = messagesOf(server.requests[1]!).filter((m) => m.role !== 'system');
    expect(history.map(({ role, content }) => ({ role, content }))).toEqual([
      { role: 'user', content: 'count slowly' },
      { role: 'assistant', content: seen },
      { role: 'user', content: 'and now?' },
    ]);
    await server.close();
    await verifyReplay(dir);
  });

  it('a shutdown mid-stream stops the turn as a recorded message; the next start leaves nothing open and replays', async () => {
    const server = await startLlmServer([
      { text: 'a long answer that streams for a while, word by word', slow: SLOW },
      { text: 'Back again.' },
    ]);
    daemons.onCleanup(() => server.close());
    const dir = testDataDir(tempDir(), { llm: server });
    const daemon = await daemons.start(dir);
    let streaming!: () => void;
    const started = new Promise<void>((resolve) => (streaming = resolve));
    const replies = askSocket(dir, 'talk', (r) => r.type === 'chunk' && streaming());
    await started;
    daemon.process.kill('SIGINT');
    expect((await daemon.exited).code).toBe(0);
    // The client is told why its reply ended: homed is stopping, not only 'cancelled'.
    expect((await replies).at(-1)).toMatchObject({
      type: 'end',
      text: '(cancelled: homed is stopping)',
      outcome: 'cancelled',
      stoppedFor: 'shutdown',
    });
    const stops = await logOf(dir, '--type', 'TurnStopRequested', '--type', 'TurnCompleted');
    expect(stops.map((e) => [e.type, e.data.reason ?? e.data.outcome])).toEqual([
      ['TurnStopRequested', 'shutdown'],
      ['TurnCompleted', 'cancelled'],
    ]);
    await verifyReplay(dir);
    await daemons.start(dir);
    expect((await finished(spawnNode([WAITER, '--data', dir, 'hello']))).stdout).toBe('Back again.\n');
    await server.close();
    await verifyReplay(dir);
  });

  it("a person's message preempts a plugin's streaming turn, is answered, and the preempted input runs again and is answered", async () => {
    const server = await startLlmServer([
      when('write a poem', { text: 'Roses are red, violets are blue, this poem is long', slow: SLOW }),
      when('urgent: the kettle boils', { text: 'Kettle handled.' }),
      when('write a poem', { text: 'A short poem.' }),
    ]);
    daemons.onCleanup(() => server.close());
    const dir = testDataDir(tempDir(), { llm: server, plugins: ['poet'] });
    await daemons.start(dir);
    // The plugin's poem streams to its own channel; the person speaks while it does.
    await expect.poll(async () => (await logOf(dir, '--type', 'LlmChunkRecorded')).length, { timeout: 15_000 }).toBeGreaterThan(0);
    const replies = await askSocket(dir, 'urgent: the kettle boils');
    expect(replies.at(-1)).toEqual({ type: 'end', text: '', outcome: 'answer', inputId: expect.any(String) });
    expect(
      replies
        .filter((r) => r.type === 'chunk')
        .map((r) => r.text)
        .join(''),
    ).toBe('Kettle handled.');
    await expect.poll(async () => (await logOf(dir, '--type', 'OutputSent')).length, { timeout: 30_000 }).toBe(3);
    const scheduler = await logOf(
      dir,
      '--stream',
      'scheduler',
      '--type',
      'TaskPreempted',
      '--type',
      'TaskResumed',
      '--type',
      'TaskCompleted',
    );
    expect(scheduler.map((e) => e.type)).toEqual(['TaskPreempted', 'TaskCompleted', 'TaskResumed', 'TaskCompleted']);
    // The preempted turn's output is what its channel was sent of it before the person spoke.
    const cut = await firstTurnPieces(dir);
    expect('Roses are red, violets are blue, this poem is long'.startsWith(cut), cut).toBe(true);
    const outputs = await logOf(dir, '--type', 'OutputSent');
    expect(outputs.map((e) => [e.data.kind, e.data.text])).toEqual([
      ['preempted', cut],
      ['answer', 'Kettle handled.'],
      ['answer', 'A short poem.'],
    ]);
    await server.close();
    await verifyReplay(dir);
  });

  it('after a SIGKILL mid-turn with two inputs waiting, the restarted daemon closes the turn, answers both, then a new one', async () => {
    const server = await startLlmServer([
      when('first', { text: 'this answer never finishes because the daemon dies while it streams', slow: { chunkDelayMs: 400 } }),
      when('second', { text: 'Second answered.' }),
      when('third', { text: 'Third answered.' }),
      when('fourth', { text: 'Fourth answered.' }),
    ]);
    daemons.onCleanup(() => server.close());
    const dir = testDataDir(tempDir(), { llm: server });
    const daemon = await daemons.start(dir);
    let streaming!: () => void;
    const started = new Promise<void>((resolve) => (streaming = resolve));
    void askSocket(dir, 'first', (r) => r.type === 'chunk' && streaming()).catch(() => undefined);
    await started;
    const accepted = (text: string) =>
      new Promise<void>((resolve, reject) => {
        const socket = createConnection(join(dir, 'homed.sock'));
        createInterface({ input: socket }).on('line', (line) => {
          if ((JSON.parse(line) as CliReply).type === 'accepted') resolve();
        });
        socket.on('error', () => undefined);
        socket.on('close', () => reject(new Error(`${text} was not accepted`)));
        socket.write(`${JSON.stringify({ type: 'message', text, from: 'someone' })}\n`);
      });
    await accepted('second');
    await accepted('third');
    daemon.process.kill('SIGKILL');
    await daemon.exited;

    await daemons.start(dir);
    await expect
      .poll(async () => (await logOf(dir, '--type', 'TaskCompleted')).map((e) => e.data.outcome), { timeout: 20_000 })
      .toEqual(['abandoned', 'done', 'done']);
    expect((await logOf(dir, '--type', 'TurnStopRequested')).map((e) => e.data.reason)).toEqual(['abandoned']);
    // The abandoned turn is closed with what it had sent: the pieces committed before the kill.
    const cut = await firstTurnPieces(dir);
    expect(cut).toMatch(/^this /);
    const answers = (await logOf(dir, '--type', 'OutputSent')).map((e) => [e.data.kind, e.data.text]);
    expect(answers).toEqual([
      ['cancelled', cut],
      ['answer', 'Second answered.'],
      ['answer', 'Third answered.'],
    ]);
    expect((await finished(spawnNode([WAITER, '--data', dir, 'fourth']))).stdout).toBe('Fourth answered.\n');
    await server.close();
    await verifyReplay(dir);
  });
});
