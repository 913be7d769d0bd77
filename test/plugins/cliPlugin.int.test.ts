/**
 * The cli plugin's socket against clients that misbehave, in-process over a real Unix socket:
 * every limit of cliWire.ts is reached and answered with its error reply, and a client that
 * leaves at any moment ends only its own session.
 */
import { PERSON_LEVEL } from '../../actors/index.ts';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { CliClient, replyOfType } from '../../cli/cliClient.ts';
import { DaemonConnectionLost, DaemonRefused } from '../../cli/daemonErrors.ts';
import { startCli } from '../../plugins/builtin/cli/cliPlugin.ts';
import {
  CLI_SOCKET_FILE,
  MAX_CLI_CLIENTS,
  MAX_LINE_BYTES,
  MAX_PENDING_MESSAGES,
  MAX_UNREAD_OUTPUT_BYTES,
} from '../../plugins/builtin/cli/cliWire.ts';
import type { ChannelDelivery } from '../../plugins/sdk/pluginApi.ts';
import { connectCli, repliesOf, requestLine } from '../support/cliSockets.ts';
import { createFakePluginApi } from '../support/fakePluginApi.ts';
import { createManualTimers } from '../support/manualTimers.ts';
import { VirtualClock } from '../../events/index.ts';
import { useTempDir } from '../support/tempDir.ts';

const tempDir = useTempDir();
const stops: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const stop of stops.splice(0)) await stop();
});

/** The cli plugin on a fresh data dir, with its output channel in the test's hands. */
const startSocket = async () => {
  const dir = tempDir();
  const api = createFakePluginApi('cli');
  let deliver: ((delivery: ChannelDelivery) => void) | undefined;
  api.registerOutputChannel = async (_spec, handler) => {
    deliver = handler as (delivery: ChannelDelivery) => void;
  };
  const cli = await startCli(api, join(dir, CLI_SOCKET_FILE), undefined, createManualTimers(), new VirtualClock(1_700_000_000_000));
  stops.push(() => cli.stop());
  /** Delivers on the cli channel to `target`, as the output actor would. */
  const send = (delivery: Omit<ChannelDelivery, 'channel'>) => deliver!({ channel: 'cli', ...delivery } as ChannelDelivery);
  /** What the clients sent, in order: each at the person's level, none queued behind a plugin's work. */
  const sent = () => {
    if (api.inputs.length > 0 || api.interrupts.some((i) => i.level !== PERSON_LEVEL)) {
      throw new Error(`the cli sent a message below the person's level: ${JSON.stringify([...api.inputs, ...api.interrupts])}`);
    }
    return api.interrupts.map((i) => i.input);
  };
  /** The reply target of the n-th input a client sent (0-based). */
  const targetOf = (n: number): string => sent()[n]!.replyTo!.target!;
  return { dir, api, sent, send, targetOf };
};

/** Resolves once `check` holds, polling the event loop (the socket's events come in their own time). */
const eventually = async (check: () => boolean, what: string): Promise<void> => {
  for (let i = 0; i < 2_000 && !check(); i++) await new Promise((resolve) => setImmediate(resolve));
  expect(check(), what).toBe(true);
};

describe('sessions and their users', () => {
  it('says who a session is in its welcome, and sends a reply whose session is gone to the same user only', async () => {
    const { dir, sent, send, targetOf } = await startSocket();
    const asker = await connectCli(dir);
    const askerReplies = repliesOf(asker);
    asker.end(requestLine({ type: 'message', text: 'remind me in a minute', from: 'ada' }));
    expect(await askerReplies.next()).toMatchObject({ type: 'accepted' });
    expect(targetOf(0)).toMatch(/^ada\/\w+-s1$/);
    // Its reply ends, and the session with it (the client had half-closed).
    send({ kind: 'end', target: targetOf(0), text: '', outcome: 'answer', inputId: 'in-1' });
    await askerReplies.closed();

    const later = await connectCli(dir);
    const laterReplies = repliesOf(later);
    later.write(requestLine({ type: 'hello', from: 'ada' }));
    expect(await laterReplies.next()).toEqual({
      type: 'welcome',
      session: expect.stringMatching(/-s2$/),
      conversation: 'cli:ada',
      models: [],
    });
    const other = await connectCli(dir);
    const otherReplies = repliesOf(other);
    other.write(requestLine({ type: 'hello', from: 'bob' }));
    expect(await otherReplies.next()).toMatchObject({ type: 'welcome', conversation: 'cli:bob' });

    await eventually(() => sent().length === 1, 'the first message got in');
    send({ kind: 'tool', target: targetOf(0), text: 'timer_set', inputId: 'in-9' });
    send({ kind: 'chunk', target: targetOf(0), text: 'Time to stretch.', inputId: 'in-9' });
    send({ kind: 'end', target: targetOf(0), text: '', outcome: 'answer', inputId: 'in-9' });
    expect(await laterReplies.next()).toEqual({ type: 'tool', name: 'timer_set', inputId: 'in-9' });
    expect(await laterReplies.next()).toEqual({ type: 'chunk', text: 'Time to stretch.', inputId: 'in-9' });
    expect(await laterReplies.next()).toEqual({ type: 'end', text: '', outcome: 'answer', inputId: 'in-9' });
    other.write(requestLine({ type: 'tools' }));
    expect(await otherReplies.next()).toEqual({ type: 'tools', tools: [] }); // bob got none of ada's reminder
    later.destroy();
    other.destroy();
  });

  it('refuses a hello or a cancel that does not say who or what', async () => {
    const { dir } = await startSocket();
    const socket = await connectCli(dir);
    const replies = repliesOf(socket);
    socket.write(`${requestLine({ type: 'hello', from: 'no spaces allowed' })}${requestLine({ type: 'cancel' })}`);
    expect(await replies.next()).toMatchObject({ type: 'error', code: 'bad_request', message: expect.stringContaining("'from'") });
    expect(await replies.next()).toMatchObject({ type: 'error', code: 'bad_request', message: expect.stringContaining("'inputId'") });
    socket.destroy();
  });
});

describe('the cli socket', () => {
  it('refuses a line longer than the limit as it arrives, before its newline, and closes only that connection', async () => {
    const { dir, api, sent } = await startSocket();
    const socket = await connectCli(dir);
    const replies = repliesOf(socket);
    const piece = Buffer.alloc(64 * 1024, 'y');
    socket.write(`{"type":"message","text":"`);
    for (let sent = 0; sent <= MAX_LINE_BYTES; sent += piece.length) socket.write(piece);
    await replies.closed();
    expect(replies.replies).toEqual([{ type: 'error', code: 'line_too_long', message: expect.stringContaining('at most 1 MiB') }]);
    expect(sent()).toEqual([]);
    expect(api.logs).toContainEqual(expect.stringContaining('a request line longer than 1 MiB'));
    const next = await connectCli(dir);
    const nextReplies = repliesOf(next);
    next.write(requestLine({ type: 'tools' }));
    expect(await nextReplies.next()).toEqual({ type: 'tools', tools: [] });
    next.destroy();
  });

  it('answers a bad line with bad_request and goes on serving the same connection', async () => {
    const { dir } = await startSocket();
    const socket = await connectCli(dir);
    const replies = repliesOf(socket);
    socket.write('not json\n{"type":"nonsense"}\n{"type":"tools"}\n');
    expect(await replies.next()).toMatchObject({ type: 'error', code: 'bad_request', message: expect.stringContaining('not JSON') });
    expect(await replies.next()).toMatchObject({ type: 'error', code: 'bad_request' });
    expect(await replies.next()).toEqual({ type: 'tools', tools: [] });
    socket.destroy();
  });

  it('survives clients that leave right after sending, while their reply is delivered to them', async () => {
    const { dir, sent, send, targetOf } = await startSocket();
    for (let i = 0; i < 20; i++) {
      const socket = await connectCli(dir);
      socket.end(requestLine({ type: 'message', text: `bye ${i}` }));
      if (i % 2 === 0) socket.destroy();
    }
    await eventually(() => sent().length === 20, 'every message got in before its client left');
    // Their replies go out while, or after, they leave: EPIPE and ECONNRESET end their sessions only.
    for (let i = 0; i < 20; i++) {
      send({ kind: 'chunk', target: targetOf(i), text: 'z'.repeat(100_000) });
      send({ kind: 'end', target: targetOf(i), text: '', outcome: 'answer' });
    }
    const socket = await connectCli(dir);
    const replies = repliesOf(socket);
    socket.write(requestLine({ type: 'tools' }));
    expect(await replies.next()).toEqual({ type: 'tools', tools: [] });
    socket.destroy();
  });

  it('a half-closed client still gets its whole reply, then the daemon closes its side', async () => {
    const { dir, send, targetOf } = await startSocket();
    const socket = await connectCli(dir);
    const replies = repliesOf(socket);
    socket.end(requestLine({ type: 'message', text: 'hello' }));
    expect(await replies.next()).toMatchObject({ type: 'accepted' });
    send({ kind: 'chunk', target: targetOf(0), text: 'hi' });
    send({ kind: 'end', target: targetOf(0), text: '', outcome: 'answer' });
    await replies.closed();
    expect(replies.replies.map((r) => r.type)).toEqual(['accepted', 'chunk', 'end']);
  });

  it(`reads a session's next message only while fewer than ${MAX_PENDING_MESSAGES} wait for their reply`, async () => {
    const { dir, sent, send, targetOf } = await startSocket();
    const socket = await connectCli(dir);
    repliesOf(socket);
    socket.write(Array.from({ length: 10 }, (_, i) => requestLine({ type: 'message', text: `m${i}` })).join(''));
    await eventually(() => sent().length === MAX_PENDING_MESSAGES, 'the first messages got in');
    for (let i = 0; i < 50; i++) await new Promise((resolve) => setImmediate(resolve));
    expect(sent()).toHaveLength(MAX_PENDING_MESSAGES);
    send({ kind: 'end', target: targetOf(0), text: '', outcome: 'answer' });
    await eventually(() => sent().length === MAX_PENDING_MESSAGES + 1, 'one more once a reply ended');
    expect(sent().map((input) => input.text)).toEqual(['m0', 'm1', 'm2', 'm3', 'm4']);
    socket.destroy();
  });

  // With its messages' replies all waiting for approval, a session's /approve was read after its
  // next message, which waited for one of them to end: neither ever came. A command goes past it.
  it(`serves a command sent after a message that waits for a place, and still reads no second message`, async () => {
    const { dir, sent } = await startSocket();
    const socket = await connectCli(dir);
    const replies = repliesOf(socket);
    const messages = (from: number, count: number) =>
      Array.from({ length: count }, (_, i) => requestLine({ type: 'message', text: `m${from + i}` })).join('');
    socket.write(messages(0, MAX_PENDING_MESSAGES + 1));
    await eventually(() => sent().length === MAX_PENDING_MESSAGES, 'the first messages got in');
    socket.write(requestLine({ type: 'tools' }));
    await eventually(() => replies.replies.some((r) => r.type === 'tools'), 'the command was answered');
    socket.write(messages(MAX_PENDING_MESSAGES + 1, 2) + requestLine({ type: 'tools' }));
    for (let i = 0; i < 50; i++) await new Promise((resolve) => setImmediate(resolve));
    // The command behind a second waiting message waits with it, unread: a flood of messages stays bounded.
    expect(replies.replies.filter((r) => r.type === 'tools')).toHaveLength(1);
    expect(sent()).toHaveLength(MAX_PENDING_MESSAGES);
    socket.destroy();
  });

  it('drops a client that leaves its replies unread past the limit, and says so in the log', async () => {
    const { dir, api, send, targetOf } = await startSocket();
    const socket = await connectCli(dir);
    const replies = repliesOf(socket);
    socket.write(requestLine({ type: 'message', text: 'stream me a lot' }));
    expect(await replies.next()).toMatchObject({ type: 'accepted' });
    socket.pause(); // reads nothing more
    const chunk = 'x'.repeat(256 * 1024);
    for (let sent = 0; sent <= 2 * MAX_UNREAD_OUTPUT_BYTES; sent += chunk.length) send({ kind: 'chunk', target: targetOf(0), text: chunk });
    expect(api.logs).toContainEqual(expect.stringMatching(/dropped cli session \w+-s1: it left more than 8 MiB of replies unread/));
    socket.resume();
    await replies.closed();
  });

  it(`tells connection ${MAX_CLI_CLIENTS + 1} that it is busy, and serves again once one leaves`, async () => {
    const { dir, api } = await startSocket();
    const served = [];
    for (let i = 0; i < MAX_CLI_CLIENTS; i++) served.push(await connectCli(dir));
    const extra = await connectCli(dir);
    const extraReplies = repliesOf(extra);
    expect(await extraReplies.next()).toEqual({ type: 'error', code: 'busy', message: expect.stringContaining('256 cli clients') });
    await extraReplies.closed();
    served.pop()!.destroy();
    await eventually(() => api.logs.some((line) => line.startsWith('refusing cli clients')), 'the refusal is logged');
    let again: Awaited<ReturnType<typeof connectCli>> | undefined;
    let answer: unknown;
    for (let attempt = 0; attempt < 50 && (answer as { type?: string } | null | undefined)?.type !== 'tools'; attempt++) {
      again?.destroy();
      again = await connectCli(dir);
      const replies = repliesOf(again);
      again.write(requestLine({ type: 'tools' }));
      answer = await replies.next();
    }
    expect(answer).toEqual({ type: 'tools', tools: [] });
    expect(api.logs).toContainEqual(expect.stringMatching(/^accepting cli clients again; \d+ were refused as busy$/));
    for (const socket of [...served, again!]) socket.destroy();
  });
});

describe('CliClient', () => {
  it('refuses a request longer than the daemon takes, before sending it', async () => {
    const { dir, sent } = await startSocket();
    const client = await CliClient.connect(dir);
    const asking = client.ask({ type: 'message', text: 'w'.repeat(MAX_LINE_BYTES) }, (r): r is never => false);
    await expect(asking).rejects.toThrow(DaemonRefused);
    await expect(asking).rejects.toThrow(/as a request, and homed takes at most 1 MiB per request; send a shorter one/);
    expect(sent()).toEqual([]);
    client.close();
  });

  it('rejects what it waits for, and every later request, with one clear error when the daemon goes away', async () => {
    const { dir } = await startSocket();
    const client = await CliClient.connect(dir);
    const asking = client.ask({ type: 'message', text: 'hello' }, (r): r is never => false);
    await stops.pop()!();
    await expect(asking).rejects.toThrow(DaemonConnectionLost);
    await expect(asking).rejects.toThrow(/the connection to homed on .* was lost before its answer was complete/);
    // A request after that (waiter's next interactive line) fails at once, instead of waiting forever.
    await expect(client.ask({ type: 'tools' }, replyOfType('tools'))).rejects.toThrow(DaemonConnectionLost);
  });
});
