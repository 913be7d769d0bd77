/**
 * `homed chat` against the local LLM server: the daemon's turn (system prompt, tools, memory)
 * through a running daemon or in the daemon's kernel booted for one message; streamed reply,
 * fallback, journal, replay without the model; a daemon that dies mid-reply.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { SecretVault } from '../../adapters/secrets/secretVault.ts';
import { openDatabase } from '../../adapters/sqlite/openDatabase.ts';
import { logOf, testDataDir, useDaemons, verifyReplay } from '../support/homedSession.ts';
import { lastUserText, startLlmServer, type LlmServer, type RecordedRequest } from '../support/llmServer/index.ts';
import { finished, hasNoStackTrace, HOMED, REPO, runHomed, spawnNode } from '../support/processes.ts';
import { useTempDir } from '../support/tempDir.ts';

const tempDir = useTempDir();
const servers: LlmServer[] = [];
afterEach(async () => {
  for (const server of servers.splice(0)) await server.close();
});
const daemons = useDaemons();

type Line = { seq: number; type: string; stream: string; data: Record<string, unknown> };
const lines = (stdout: string): Line[] =>
  stdout
    .trim()
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as Line);

describe('homed chat', () => {
  it('streams the reply, journals the turn, and replays it without the model; a changed answer is caught at its seq', async () => {
    // Pieces that arrive apart are recorded apart (pieces that arrive together are one). The key is
    // scrubbed from the stream, but only an end that could begin it waits for the next piece.
    const reply = 'Paris is sunny today, with a light breeze from the west and no rain at all.';
    const server = await startLlmServer([{ text: reply, slow: { chunkDelayMs: 30 } }]);
    servers.push(server);
    const dir = join(tempDir(), 'data');
    mkdirSync(dir); // chat makes no data dir
    const chat = await finished(
      spawnNode(
        [HOMED, 'chat', '--data', dir, '--llm', `openai=${server.baseUrl('openai')}`, '--model', 'test-model', 'Weather', 'in Paris?'],
        {
          env: { ...process.env, OPENAI_API_KEY: 'sk-never-printed' },
        },
      ),
    );
    expect(chat.stderr).toBe('');
    expect(chat.code).toBe(0);
    expect(chat.stdout).toBe(`${reply}\n`);
    expect(server.requests[0]!.headers.authorization).toBe('Bearer sk-never-printed');
    // The words of the message are joined, as waiter joins them.
    expect(lastUserText(server.requests[0]!)).toBe('Weather in Paris?');

    const log = await runHomed(['log', '--data', dir]);
    expect(log.stdout).not.toContain('sk-never-printed');
    const turn = lines(log.stdout).filter((e) => e.stream.startsWith('turn-'));
    const chunks = turn.filter((e) => e.type === 'LlmChunkRecorded');
    expect(chunks.length).toBeGreaterThan(1);
    // No piece ended in what could begin the key (in any form the scrub knows), so the scrub held none back.
    const streamed = chunks.map((e) => e.data.text).join('');
    expect(streamed).toBe(reply);
    expect(chunks.at(-1)!.seq).toBeLessThan(turn.find((e) => e.type === 'LlmAnswerRecorded')!.seq);
    // The daemon's kernel ran the turn; no built-in plugin registers a stage handler, so no stage leaves a fact.
    expect(turn.filter((e) => e.type !== 'LlmChunkRecorded').map((e) => e.type)).toEqual([
      'TurnRequested',
      'LlmRequested',
      'LlmAnswerRecorded',
      'OutputSent',
      'TurnCompleted',
    ]);

    await server.close();
    servers.splice(0);
    const verify = await runHomed(['replay', '--data', dir, '--verify']);
    expect(verify.stdout).toContain('turns: 1 of 1 journals match');
    expect(verify.code).toBe(0);

    // Change one byte of the recorded answer: replay must report the first fact that follows from it.
    const recorded = turn.find((e) => e.type === 'LlmAnswerRecorded')!;
    const responded = turn.find((e) => e.type === 'OutputSent')!;
    const db = openDatabase(join(dir, 'events.db'));
    const { encodePayload } = await import('../../events/index.ts');
    const answer = recorded.data.answer as { text: string };
    db.prepare('UPDATE events SET data = ? WHERE seq = ?').run(
      encodePayload({ ...recorded.data, answer: { ...answer, text: answer.text.replace('sunny', 'sunnY') } }),
      recorded.seq,
    );
    db.close();
    const diverged = await runHomed(['replay', '--data', dir, '--verify']);
    expect(diverged.code).toBe(1);
    expect(diverged.stdout).toContain(`DIVERGED at seq ${responded.seq}`);
    expect(diverged.stdout).toContain('sunnY');
  });

  it('falls through a source that refuses the key to the next one', async () => {
    const refusing = await startLlmServer([{ status: 401 }]);
    const answering = await startLlmServer([{ text: 'From the backup.' }]);
    servers.push(refusing, answering);
    const dir = join(tempDir(), 'data');
    mkdirSync(dir); // chat makes no data dir
    const chat = await runHomed([
      'chat',
      '--data',
      dir,
      '--llm',
      `openai=${refusing.baseUrl('openai')}`,
      '--llm',
      `anthropic=${answering.baseUrl('anthropic')}`,
      '--model',
      'm',
      'hello',
    ]);
    expect(chat.code).toBe(0);
    expect(chat.stdout).toBe('From the backup.\n');
    const recorded = lines((await runHomed(['log', '--data', dir, '--type', 'LlmAnswerRecorded'])).stdout);
    expect(recorded[0]!.data.source).toBe('anthropic#2');
  });

  it('says clearly when every source fails, and when the command line is wrong', async () => {
    const failing = await startLlmServer([{ status: 500, message: 'overloaded' }]);
    servers.push(failing);
    const dir = join(tempDir(), 'data');
    mkdirSync(dir); // chat makes no data dir
    const chat = await runHomed(['chat', '--data', dir, '--llm', `ollama=${failing.baseUrl('ollama')}`, '--model', 'm', 'hi']);
    expect(chat.code).toBe(1);
    expect(chat.stderr).toContain('every LLM source failed');
    expect(chat.stderr).toContain('HTTP 500');
    const usage = await runHomed(['chat', '--llm', 'gpt=http://x', '--model', 'm', 'hi']);
    expect(usage.code).toBe(2);
    expect(usage.stderr).toContain("--llm 'gpt=http://x': adapter must be one of openai, anthropic, ollama");
    const colon = await runHomed(['chat', '--llm', 'openai:http://x', '--model', 'm', 'hi']);
    expect(colon.code).toBe(2);
    expect(colon.stderr).toContain("--llm 'openai:http://x': expected ADAPTER=URL (e.g. --llm openai=http://127.0.0.1:8000/v1");
    // A flag is a setting for this run, checked by the settings schema.
    const rounds = await runHomed(['chat', '--data', dir, '--max-rounds', '5000', 'hi']);
    expect(rounds.code).toBe(2);
    expect(rounds.stderr).toContain('--max-rounds (llm.maxRounds): must be at most 1000, got 5000');
    const empty = await runHomed(['chat', '--data', dir, ' ', '']);
    expect(empty.code).toBe(2);
    expect(empty.stderr).toContain('homed: the message is empty; give the text to send');
  });

  it('ends a reply that is not an answer as waiter does: exit 1, saying why (here the --max-rounds of this run)', async () => {
    const server = await startLlmServer([{ toolCalls: [{ name: 'timer_list', arguments: {} }] }, { text: 'never asked' }]);
    servers.push(server);
    const dir = join(tempDir(), 'data');
    mkdirSync(dir); // chat makes no data dir
    const limited = await runHomed([
      'chat',
      '--data',
      dir,
      '--llm',
      `openai=${server.baseUrl('openai')}`,
      '--model',
      'm',
      '--max-rounds',
      '1',
      'list my timers',
    ]);
    expect(limited.code).toBe(1);
    expect(limited.stderr).toBe('homed: the turn stopped at its tool-round limit (llm.maxRounds in settings.json) before a final answer\n');
    expect(server.requests).toHaveLength(1);
    await verifyReplay(dir);
  });

  it('Ctrl-C during streaming aborts the HTTP request at once and records the turn as cancelled', async () => {
    const server = await startLlmServer([
      { text: 'one two three four five six seven eight nine ten eleven twelve', slow: { chunkDelayMs: 300 } },
    ]);
    servers.push(server);
    const dir = join(tempDir(), 'data');
    mkdirSync(dir); // chat makes no data dir
    const chat = spawnNode([HOMED, 'chat', '--data', dir, '--llm', `openai=${server.baseUrl('openai')}`, '--model', 'm', 'count']);
    const done = finished(chat);
    await new Promise<void>((resolve) => chat.stdout!.once('data', () => resolve())); // streaming has begun
    const stoppedAt = performance.now();
    chat.kill('SIGINT');
    const record = await server.settled(0);
    expect(record.outcome).toBe('aborted');
    // At once: about 10 ms here when idle; the bound leaves room for a loaded CI machine, well inside the 3.6 s stream.
    expect(record.abortedAt! - stoppedAt).toBeLessThan(1_000);
    const result = await done;
    expect(result.code).toBe(130);
    const completed = lines((await runHomed(['log', '--data', dir, '--type', 'TurnCompleted'])).stdout);
    expect(completed[0]!.data.outcome).toBe('cancelled');
  });

  it('uses the sources in settings.json when no --llm is given, with the key from the named variable', async () => {
    const server = await startLlmServer([{ text: 'Configured.' }]);
    servers.push(server);
    const dir = join(tempDir(), 'data');
    const { mkdirSync, writeFileSync } = await import('node:fs');
    mkdirSync(dir, { recursive: true });
    writeFileSync(
      join(dir, 'settings.json'),
      JSON.stringify({
        llm: { sources: [{ name: 'local', adapter: 'ollama', baseUrl: server.baseUrl('ollama'), model: 'qwen', apiKeyEnv: 'LOCAL_KEY' }] },
      }),
    );
    const chat = await finished(spawnNode([HOMED, 'chat', '--data', dir, 'hi'], { env: { ...process.env, LOCAL_KEY: 'sk-from-env' } }));
    expect(chat.code).toBe(0);
    expect(chat.stdout).toBe('Configured.\n');
    expect((server.requests[0]!.body as { model: string }).model).toBe('qwen');
    const unset = await runHomed(['chat', '--data', dir, 'hi']);
    expect(unset.code).toBe(1);
    expect(unset.stderr).toContain(
      "llm.sources[0]: the environment variable LOCAL_KEY (apiKeyEnv) is not set; export it where homed starts, or keep the key in the vault ('homed secret set LOCAL_KEY'",
    );
    expect(unset.stderr).not.toContain('sk-from-env');
  });

  // The second tester: without a daemon, chat refused the README's own setup (the key in the vault).
  it('without a daemon, uses a source whose key is in the vault (apiKeySecret), as the daemon does', async () => {
    const server = await startLlmServer([{ text: 'From the vault.' }]);
    servers.push(server);
    const dir = join(tempDir(), 'data');
    mkdirSync(dir, { recursive: true });
    writeFileSync(
      join(dir, 'settings.json'),
      JSON.stringify({
        llm: { sources: [{ name: 'local', adapter: 'openai', baseUrl: server.baseUrl('openai'), model: 'm', apiKeySecret: 'OPENAI_KEY' }] },
      }),
    );
    const missing = await runHomed(['chat', '--data', dir, 'hi']);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain('OPENAI_KEY');
    expect(hasNoStackTrace(missing.stderr)).toBe(true);
    SecretVault.open(dir).set('OPENAI_KEY', 'sk-chat-vault-5521');
    const chat = await runHomed(['chat', '--data', dir, 'hi']);
    expect(chat.stderr).toBe('');
    expect(chat.stdout).toBe('From the vault.\n');
    expect(server.requests.at(-1)!.headers.authorization).toBe('Bearer sk-chat-vault-5521');
  });

  it('with no source anywhere, says where to add one, with the command for its data dir', async () => {
    // A data dir whose path has a space: the command to paste quotes it.
    const dir = join(tempDir(), "Al's data");
    mkdirSync(dir);
    const chat = await runHomed(['chat', '--data', dir, 'hi']);
    expect(chat.code).toBe(2);
    expect(chat.stderr).toContain(
      `no LLM source (llm.sources in ${join(dir, 'settings.json')}): pass --llm ADAPTER=URL, or set one up with: homed init --data '${dir.replace("'", "'\\''")}'\n`,
    );
    // The default data dir ($HOLOGRAM_DATA here) needs no --data.
    const byDefault = await runHomed(['chat', 'hi'], { env: { ...process.env, HOLOGRAM_DATA: dir } });
    expect(byDefault.code).toBe(2);
    expect(byDefault.stderr).toContain('or set one up with: homed init\n');
    // A source from --llm with no model is told to take --model, not to edit settings.json first.
    const noModel = await runHomed(['chat', '--data', dir, '--llm', 'openai=http://127.0.0.1:9/v1', 'hi']);
    expect(noModel.code).toBe(1);
    expect(noModel.stderr).toContain("LLM source 'openai#1' names no model: pass --model NAME (homed chat)");
  });
});

type ChatMessage = { role: string; content: string | null; tool_calls?: { function: { name: string } }[] };
type ChatBody = { messages: ChatMessage[]; tools?: { function: { name: string } }[] };

const bodyOf = (request: RecordedRequest): ChatBody => request.body as ChatBody;

/** A model that writes a file with the files plugin, says so, then answers from the conversation. */
const gardenerScript = () => [
  { toolCalls: [{ name: 'files_write', arguments: { path: 'plan.txt', content: 'sow the beans' } }] },
  { text: 'Saved your plan.' },
  { text: 'You asked me to save your plan.' },
];

/** Two chats on a data dir whose persona is Ada and which holds the `mute` plugin (tool `mute_wait`). */
const gardenDir = (llm: LlmServer): string => {
  const dir = testDataDir(tempDir(), { llm, plugins: ['mute'], settings: { timeZone: 'Europe/Paris' } });
  writeFileSync(join(dir, 'persona.md'), 'You are Ada, a gardener who answers in one line.\n');
  return dir;
};

const chat = (dir: string, ...args: string[]) => runHomed(['chat', '--data', dir, ...args]);

/** What the daemon's turn sends: the persona and the time, the tools of built-in and data-dir plugins. */
const expectDaemonTurn = (request: RecordedRequest, persona = 'You are Ada, a gardener') => {
  const body = bodyOf(request);
  expect(body.messages[0]?.role).toBe('system');
  expect(body.messages[0]?.content).toContain(persona);
  expect(body.messages[0]?.content).toMatch(/It is now .*\(Europe\/Paris\)/);
  const tools = (body.tools ?? []).map((t) => t.function.name);
  for (const tool of ['files_write', 'memory_recall', 'timer_set', 'mute_wait']) expect(tools).toContain(tool);
};

/** The second chat's request carries the first exchange: the words, the tool call, its result, the answer. */
const expectFirstExchangeIn = (request: RecordedRequest) => {
  const history = bodyOf(request).messages.slice(1);
  expect(history.map((m) => m.role)).toEqual(['user', 'assistant', 'tool', 'assistant', 'user']);
  expect(history[0]!.content).toBe('save my plan: sow the beans');
  expect(history[1]!.tool_calls?.[0]?.function.name).toBe('files_write');
  expect(history[2]!.content).toContain('plan.txt');
  expect(history[3]!.content).toBe('Saved your plan.');
  expect(history[4]!.content).toBe('what did I ask you?');
};

describe('homed chat runs the turn the daemon runs', () => {
  it('goes through a running daemon: its system prompt and tools, a tool call that runs, the history kept; its log replays', async () => {
    const llm = await startLlmServer(gardenerScript());
    servers.push(llm);
    const dir = gardenDir(llm);
    const daemon = await daemons.start(dir);

    const first = await chat(dir, 'save my plan: sow the beans');
    expect(first.stderr).toBe('');
    expect(first.code).toBe(0);
    expect(first.stdout).toBe('Saved your plan.\n');
    expect(readFileSync(join(dir, 'files', 'plan.txt'), 'utf8')).toBe('sow the beans');
    const second = await chat(dir, 'what did I ask you?');
    expect(second.stderr).toBe('');
    expect(second.stdout).toBe('You asked me to save your plan.\n');

    expect(llm.requests).toHaveLength(3);
    expectDaemonTurn(llm.requests[0]!);
    expectFirstExchangeIn(llm.requests[2]!);
    // The daemon ran both turns: chat booted no kernel of its own, and the daemon still holds the dir.
    expect(await logOf(dir, '--type', 'KernelStarted')).toHaveLength(1);
    expect(readFileSync(join(dir, 'homed.pid'), 'utf8')).toBe(`${daemon.process.pid}\nhomed run\n`);

    // Its settings decide there: a flag that would override them is refused in one line, and nothing is asked.
    const flagged = await chat(dir, '--model', 'other', '--system', 'You are Bea.', 'hi');
    expect(flagged.code).toBe(1);
    expect(flagged.stderr.trim().split('\n')).toHaveLength(1);
    expect(flagged.stderr).toContain(`is in use by homed run (pid ${daemon.process.pid})`);
    expect(flagged.stderr).toContain('--model, --system cannot be used');
    expect(llm.requests).toHaveLength(3);

    await daemons.stop(daemon);
    expect(await verifyReplay(dir)).toContain('turns: 2 of 2 journals match');
  });

  it('Ctrl-C through the daemon stops the turn chat started; the daemon answers the next chat', async () => {
    const llm = await startLlmServer([
      { text: 'one two three four five six seven eight nine ten eleven twelve', slow: { chunkDelayMs: 300 } },
      { text: 'Still here.' },
    ]);
    servers.push(llm);
    const dir = testDataDir(tempDir(), { llm });
    const daemon = await daemons.start(dir);
    const counting = spawnNode([HOMED, 'chat', '--data', dir, 'count']);
    const done = finished(counting);
    await new Promise<void>((resolve) => counting.stdout!.once('data', () => resolve())); // streaming has begun
    counting.kill('SIGINT');
    expect((await llm.settled(0)).outcome).toBe('aborted');
    const stopped = await done;
    expect(stopped.code).toBe(130);
    expect(stopped.stderr).toBe('homed: stopped\n');
    const [completed] = await logOf(dir, '--type', 'TurnCompleted');
    expect(completed!.data.outcome).toBe('cancelled');

    const next = await chat(dir, 'still there?');
    expect(next.code, next.stderr).toBe(0);
    expect(next.stdout).toBe('Still here.\n');
    await daemons.stop(daemon);
    await verifyReplay(dir);
  });

  it("without a daemon, boots the daemon's kernel for each message and stops it in order: the same prompt, tools and history; the log replays", async () => {
    const llm = await startLlmServer(gardenerScript());
    servers.push(llm);
    const dir = gardenDir(llm);

    const first = await chat(dir, 'save my plan: sow the beans');
    expect(first.stderr).toBe('');
    expect(first.code).toBe(0);
    expect(first.stdout).toBe('Saved your plan.\n');
    expect(readFileSync(join(dir, 'files', 'plan.txt'), 'utf8')).toBe('sow the beans');
    // A flag overrides its setting for this one run: here the persona.
    const second = await chat(dir, '--system', 'You are Bea, a baker.', 'what did I ask you?');
    expect(second.stderr).toBe('');
    expect(second.stdout).toBe('You asked me to save your plan.\n');

    expect(llm.requests).toHaveLength(3);
    expectDaemonTurn(llm.requests[0]!);
    expectDaemonTurn(llm.requests[2]!, 'You are Bea, a baker.');
    expect(bodyOf(llm.requests[2]!).messages[0]!.content).not.toContain('Ada');
    expectFirstExchangeIn(llm.requests[2]!);

    // Each chat booted the kernel and stopped it in order, and left the dir to the next writer.
    const started = await logOf(dir, '--type', 'KernelStarted');
    expect(started.map((e) => e.data.pid)).toHaveLength(2);
    expect(await logOf(dir, '--type', 'KernelStopped')).toHaveLength(2);
    expect(existsSync(join(dir, 'homed.sock'))).toBe(false);
    expect(existsSync(join(dir, 'homed.pid'))).toBe(false);
    const report = await verifyReplay(dir);
    expect(report).toContain('kernel: 2 of 2 journals match');
    expect(report).toContain('turns: 2 of 2 journals match');
  });

  it('refuses a second chat in one line while the first runs its own kernel, which it would not outlive', async () => {
    // A reply long enough (about 6 s) that the second chat, however slowly it starts, comes while it runs.
    const REPLY = 'one two three four five six seven eight nine ten eleven twelve';
    const llm = await startLlmServer([{ text: REPLY, slow: { chunkDelayMs: 500 } }, { text: 'never asked' }]);
    servers.push(llm);
    const dir = testDataDir(tempDir(), { llm });
    const firstChat = spawnNode([HOMED, 'chat', '--data', dir, 'count']);
    const first = finished(firstChat);
    await new Promise<void>((resolve) => firstChat.stdout!.once('data', () => resolve())); // its kernel answers on the socket
    const second = await chat(dir, 'me too');
    expect(second.code).toBe(1);
    expect(second.stderr.trim().split('\n')).toHaveLength(1);
    expect(second.stderr).toContain(`is in use by homed chat (pid ${firstChat.pid}), which stops once its reply ended`);
    expect(hasNoStackTrace(second.stderr)).toBe(true);
    const answered = await first;
    expect(answered.code, answered.stderr).toBe(0);
    expect(answered.stdout).toBe(`${REPLY}\n`);
    expect(llm.requests).toHaveLength(1);
    await verifyReplay(dir);
  });

  it("Ctrl-C while chat's kernel boots stops the boot in order: exit 130, no model asked, the log replays", async () => {
    const llm = await startLlmServer([{ text: 'never asked' }]);
    servers.push(llm);
    const dir = testDataDir(tempDir(), { llm });
    // A data-dir plugin whose start waits for a file: chat's kernel is still booting until then.
    const plugin = join(dir, 'plugins', 'slowstart');
    mkdirSync(plugin);
    writeFileSync(join(plugin, 'package.json'), '{"type": "module"}');
    writeFileSync(join(plugin, 'plugin.json'), JSON.stringify({ name: 'slowstart', version: '1.0.0', entry: 'main.ts', capabilities: [] }));
    writeFileSync(
      join(plugin, 'main.ts'),
      `import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { runPlugin } from ${JSON.stringify(join(REPO, 'plugins/sdk/index.ts'))};
// In its state folder, the one part of its folder it may write.
const state = process.env.HOLOGRAM_PLUGIN_STATE;
writeFileSync(join(state, 'started'), '');
const until = Date.now() + 9_000;
while (!existsSync(join(state, 'go')) && Date.now() < until) await new Promise((r) => setTimeout(r, 50));
await runPlugin({ name: 'slowstart', version: '1.0.0' }, async () => undefined);
`,
    );
    const booting = spawnNode([HOMED, 'chat', '--data', dir, 'hi']);
    const done = finished(booting);
    const state = join(dir, 'state', 'slowstart');
    while (!existsSync(join(state, 'started'))) await new Promise((resolve) => setTimeout(resolve, 50));
    booting.kill('SIGINT');
    writeFileSync(join(state, 'go'), '');
    const stopped = await done;
    expect(stopped.code).toBe(130);
    expect(stopped.stderr).toBe('homed: stopped\n');
    expect(llm.requests).toHaveLength(0);
    const [kernelStopped] = await logOf(dir, '--type', 'KernelStopped');
    expect(kernelStopped!.data.reason).toBe('homed chat was interrupted while starting');
    await verifyReplay(dir);
  });

  it('when the daemon dies mid-reply, exits 1 with one line and no stack trace; the next chat runs without it', async () => {
    const llm = await startLlmServer([
      { text: 'one two three four five six seven eight nine ten eleven twelve', slow: { chunkDelayMs: 300 } },
      { text: 'Back without it.' },
    ]);
    servers.push(llm);
    const dir = testDataDir(tempDir(), { llm });
    const daemon = await daemons.start(dir);
    const counting = spawnNode([HOMED, 'chat', '--data', dir, 'count']);
    const done = finished(counting);
    await new Promise<void>((resolve) => counting.stdout!.once('data', () => resolve()));
    daemon.process.kill('SIGKILL');
    const lost = await done;
    expect(lost.code).toBe(1);
    expect(lost.stderr.trim().split('\n')).toHaveLength(1);
    expect(lost.stderr).toContain('the connection to homed');
    expect(hasNoStackTrace(lost.stderr)).toBe(true);
    // What came of the reply ends its line, so the line saying why stands on its own in a terminal.
    expect(lost.stdout).toMatch(/^one\b.*\n$/s);
    await daemon.exited;

    // The killed daemon left its socket and lock behind: neither blocks the next chat, which runs in process.
    const next = await chat(dir, 'are you there?');
    expect(next.stderr).toBe('');
    expect(next.stdout).toBe('Back without it.\n');
    await verifyReplay(dir);
  });
});
