/**
 * The provider chain through homed: a source that refuses its key is skipped for the next
 * source at once, stays skipped after a restart (the refusal is in the log), and is asked again
 * once the user changes the key. A source that is merely down is asked again next turn.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { askSocket, logOf, testDataDir, useDaemons, verifyReplay } from '../support/homedSession.ts';
import { hasNoStackTrace, runHomed } from '../support/processes.ts';
import { startLlmServer, type LlmServer } from '../support/llmServer/index.ts';
import { useTempDir } from '../support/tempDir.ts';

const tempDir = useTempDir();
const daemons = useDaemons();

const sources = (refusing: LlmServer, fallback: LlmServer, key: string) => [
  { name: 'cloud', adapter: 'openai', baseUrl: refusing.baseUrl('openai'), model: 'm', apiKey: key },
  { name: 'local', adapter: 'openai', baseUrl: fallback.baseUrl('openai'), model: 'm' },
];

const answerOf = async (dir: string, text: string): Promise<string> => {
  const replies = await askSocket(dir, text);
  expect(replies.at(-1)).toMatchObject({ type: 'end', outcome: 'answer' });
  return replies
    .filter((reply) => reply.type === 'chunk')
    .map((reply) => reply.text)
    .join('');
};

describe('LLM sources through homed', () => {
  it('skips a source that refused its key, across a restart, until the key changes', async () => {
    const cloud = await startLlmServer([{ status: 401, message: 'invalid api key' }, { text: 'cloud, with the new key' }]);
    const local = await startLlmServer([{ text: 'local one' }, { text: 'local two' }]);
    daemons.onCleanup(() => cloud.close());
    daemons.onCleanup(() => local.close());
    const dir = testDataDir(tempDir(), { sources: sources(cloud, local, 'sk-old-key') });

    let daemon = await daemons.start(dir);
    expect(await answerOf(dir, 'first')).toBe('local one');
    await daemons.stop(daemon);
    const refusals = await logOf(dir, '--type', 'LlmSourceRefused');
    expect(refusals.map((event) => event.data)).toEqual([
      { source: 'cloud', fingerprint: expect.stringMatching(/^[0-9a-f]{16}$/), reason: expect.stringContaining('401') },
    ]);
    expect(JSON.stringify(refusals)).not.toContain('sk-old-key');

    daemon = await daemons.start(dir);
    expect(await answerOf(dir, 'second')).toBe('local two');
    expect(cloud.requests).toHaveLength(1);
    await daemons.stop(daemon);

    const settingsFile = join(dir, 'settings.json');
    writeFileSync(settingsFile, readFileSync(settingsFile, 'utf8').replace('sk-old-key', 'sk-new-key'));
    daemon = await daemons.start(dir);
    expect(await answerOf(dir, 'third')).toBe('cloud, with the new key');
    expect(cloud.requests).toHaveLength(2);
    await daemons.stop(daemon);
    await verifyReplay(dir);
  });

  it('asks a source that was only down again on the next turn', async () => {
    const flaky = await startLlmServer([{ status: 503, message: 'overloaded' }, { text: 'back up' }]);
    const local = await startLlmServer([{ text: 'local answered' }]);
    daemons.onCleanup(() => flaky.close());
    daemons.onCleanup(() => local.close());
    const dir = testDataDir(tempDir(), { sources: sources(flaky, local, 'sk-key') });
    const daemon = await daemons.start(dir);
    expect(await answerOf(dir, 'one')).toBe('local answered');
    expect(await answerOf(dir, 'two')).toBe('back up');
    await daemons.stop(daemon);
    expect(await logOf(dir, '--type', 'LlmSourceRefused')).toEqual([]);
  });

  it('keeps a key the server echoes out of the log and out of what the user sees', async () => {
    const key = 'sk-live-0123456789abcdef';
    const echoing = await startLlmServer([{ status: 400, message: `unknown model for key ${key}` }]);
    daemons.onCleanup(() => echoing.close());
    const dir = testDataDir(tempDir(), {
      sources: [{ name: 'cloud', adapter: 'openai', baseUrl: echoing.baseUrl('openai'), model: 'm', apiKey: key }],
    });
    const daemon = await daemons.start(dir);
    const replies = await askSocket(dir, 'hello');
    await daemons.stop(daemon);
    expect(replies.at(-1)).toMatchObject({ type: 'end', outcome: 'failed' });
    expect(JSON.stringify(replies)).toContain('unknown model for key [redacted]');
    expect(JSON.stringify(replies)).not.toContain(key);
    const log = await runHomed(['log', '--data', dir]);
    expect(log.stdout).toContain('[redacted]');
    expect(log.stdout).not.toContain(key);
  });

  it('refuses a baseUrl that carries credentials, without repeating them', async () => {
    for (const baseUrl of ['http://me:sk-in-userinfo-99@127.0.0.1:9/v1', 'http://127.0.0.1:9/v1?api_key=sk-in-query-99']) {
      const dir = testDataDir(join(tempDir(), String(baseUrl.length)), {
        sources: [{ name: 'cloud', adapter: 'openai', baseUrl, model: 'm' }],
      });
      const start = await runHomed(['run', '--data', dir]);
      expect(start.code, start.stderr).not.toBe(0);
      expect(start.stderr).toContain('baseUrl carries credentials');
      expect(start.stderr).toContain('apiKeyEnv');
      expect(start.stderr + start.stdout).not.toMatch(/sk-in-(userinfo|query)-99/);
      expect(hasNoStackTrace(start.stderr)).toBe(true);
    }
  });
});
