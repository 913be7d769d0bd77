/** `homed chat` against the local LLM server: streamed reply, fallback, journal, replay without the model. */
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { openDatabase } from '../../adapters/sqlite/openDatabase.ts';
import { startLlmServer, type LlmServer } from '../support/llmServer/index.ts';
import { finished, HOMED, runHomed, spawnNode } from '../support/processes.ts';
import { useTempDir } from '../support/tempDir.ts';

const tempDir = useTempDir();
const servers: LlmServer[] = [];
afterEach(async () => {
  for (const server of servers.splice(0)) await server.close();
});

type Line = { seq: number; type: string; stream: string; data: Record<string, unknown> };
const lines = (stdout: string): Line[] =>
  stdout
    .trim()
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as Line);

describe('homed chat', () => {
  it('streams the reply, journals the turn, and replays it without the model; a changed answer is caught at its seq', async () => {
    // Pieces that arrive apart are recorded apart (pieces that arrive together are one).
    const server = await startLlmServer([{ text: 'Paris is sunny today.', slow: { chunkDelayMs: 30 } }]);
    servers.push(server);
    const dir = join(tempDir(), 'data');
    const chat = await finished(
      spawnNode(
        [HOMED, 'chat', '--data', dir, '--llm', `openai=${server.baseUrl('openai')}`, '--model', 'test-model', 'Weather in Paris?'],
        {
          env: { ...process.env, OPENAI_API_KEY: 'sk-never-printed' },
        },
      ),
    );
    expect(chat.stderr).toBe('');
    expect(chat.code).toBe(0);
    expect(chat.stdout).toBe('Paris is sunny today.\n');
    expect(server.requests[0]!.headers.authorization).toBe('Bearer sk-never-printed');

    const log = await runHomed(['log', '--data', dir]);
    expect(log.stdout).not.toContain('sk-never-printed');
    const turn = lines(log.stdout).filter((e) => e.stream.startsWith('turn-'));
    const chunks = turn.filter((e) => e.type === 'LlmChunkRecorded');
    expect(chunks.length).toBeGreaterThan(1);
    expect(chunks.map((e) => e.data.text).join('')).toBe('Paris is sunny today.');
    expect(chunks.at(-1)!.seq).toBeLessThan(turn.find((e) => e.type === 'LlmAnswerRecorded')!.seq);
    // No plugin offers stage handlers to homed chat: no stage leaves a fact.
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
    const chat = await runHomed(['chat', '--data', dir, '--llm', `ollama=${failing.baseUrl('ollama')}`, '--model', 'm', 'hi']);
    expect(chat.code).toBe(1);
    expect(chat.stderr).toContain('every LLM source failed');
    expect(chat.stderr).toContain('HTTP 500');
    const usage = await runHomed(['chat', '--llm', 'gpt=http://x', '--model', 'm', 'hi']);
    expect(usage.code).toBe(2);
    expect(usage.stderr).toContain("--llm 'gpt=http://x': adapter must be one of openai, anthropic, ollama");
  });

  it('Ctrl-C during streaming aborts the HTTP request at once and records the turn as cancelled', async () => {
    const server = await startLlmServer([
      { text: 'one two three four five six seven eight nine ten eleven twelve', slow: { chunkDelayMs: 300 } },
    ]);
    servers.push(server);
    const dir = join(tempDir(), 'data');
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
    expect(unset.stderr).toContain('llm.sources[0]: the environment variable LOCAL_KEY (apiKeyEnv) is not set');
    expect(unset.stderr).not.toContain('sk-from-env');
  });

  it('with no source anywhere, says where to add one', async () => {
    const dir = join(tempDir(), 'data');
    const chat = await runHomed(['chat', '--data', dir, 'hi']);
    expect(chat.code).toBe(2);
    expect(chat.stderr).toContain('no LLM source: pass --llm ADAPTER=URL, or add llm.sources to');
  });
});
