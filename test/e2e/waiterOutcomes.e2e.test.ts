/**
 * waiter says why a reply did not come, and exits non-zero for anything that is not an answer:
 * no model configured, a model server that is down (with its URL), a wrong URL (404, with a
 * hint), a tool-round limit. An answer exits 0, also from an OpenAI-compatible baseUrl written
 * without its /v1.
 */
import { describe, expect, it } from 'vitest';
import { testDataDir, useDaemons } from '../support/homedSession.ts';
import { startLlmServer } from '../support/llmServer/index.ts';
import { finished, hasNoStackTrace, runNodeWithInput, spawnNode, WAITER } from '../support/processes.ts';
import { useTempDir } from '../support/tempDir.ts';

const tempDir = useTempDir();
const daemons = useDaemons();

const waiter = (dir: string, text: string) => finished(spawnNode([WAITER, '--data', dir, text]));

describe('waiter on a reply that is not an answer', () => {
  it('exits 1 and says what to configure when no model is', async () => {
    const dir = testDataDir(tempDir());
    const daemon = await daemons.start(dir);
    const result = await waiter(dir, 'hello?');
    await daemons.stop(daemon);
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/^waiter: .*llm\.sources.*\n$/);
    // The command to paste names this data dir, which is not the default one.
    expect(result.stderr).toContain(`set one up with homed init --data ${dir} (`);
  });

  it('exits 1 on a wrong URL, naming it with a hint (404)', async () => {
    const llm = await startLlmServer([{ text: 'never sent' }]);
    daemons.onCleanup(() => llm.close());
    const dir = testDataDir(tempDir(), { sources: [{ name: 'local', adapter: 'openai', baseUrl: `${llm.url}/nope/v1`, model: 'm' }] });
    const daemon = await daemons.start(dir);
    const result = await waiter(dir, 'hello?');
    await daemons.stop(daemon);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(`POST ${llm.url}/nope/v1/chat/completions was not found: check the source's baseUrl and model`);
    expect(hasNoStackTrace(result.stderr)).toBe(true);
  });

  it('answers from an OpenAI-compatible baseUrl given without its /v1', async () => {
    const llm = await startLlmServer([{ text: 'answered through /v1' }]);
    daemons.onCleanup(() => llm.close());
    const dir = testDataDir(tempDir(), { sources: [{ name: 'local', adapter: 'openai', baseUrl: llm.url, model: 'm' }] });
    const daemon = await daemons.start(dir);
    const result = await waiter(dir, 'hello?');
    await daemons.stop(daemon);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toBe('answered through /v1\n');
  });

  it('exits 1 and says the model server is down, naming its URL', async () => {
    const dir = testDataDir(tempDir(), {
      sources: [{ name: 'local', adapter: 'openai', baseUrl: 'http://127.0.0.1:9/v1', model: 'm' }],
    });
    const daemon = await daemons.start(dir);
    const result = await waiter(dir, 'hello?');
    await daemons.stop(daemon);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('cannot reach http://127.0.0.1:9/v1/chat/completions');
    expect(hasNoStackTrace(result.stderr)).toBe(true);
  });

  it('exits 1 at the tool-round limit, and 0 for an answer', async () => {
    const llm = await startLlmServer([{ toolCalls: [{ name: 'timer_list', arguments: {} }] }, { text: 'a plain answer' }]);
    daemons.onCleanup(() => llm.close());
    const dir = testDataDir(tempDir(), { llm, settings: { llm: { maxRounds: 1 } } });
    const daemon = await daemons.start(dir);
    const limited = await waiter(dir, 'list my timers');
    const answered = await waiter(dir, 'hi');
    await daemons.stop(daemon);
    expect(limited.code, limited.stderr).toBe(1);
    expect(limited.stderr).toContain('tool-round limit');
    expect(answered.code).toBe(0);
    expect(answered.stdout).toBe('a plain answer\n');
  });

  // A script piping its messages in was told 0 after a message the turn never answered.
  it('piped: goes on to the next message after one not answered, and exits 1 once the input ends', async () => {
    const llm = await startLlmServer([
      { toolCalls: [{ name: 'timer_list', arguments: {} }] },
      { text: 'a plain answer' },
      { text: 'answered again' },
    ]);
    daemons.onCleanup(() => llm.close());
    const dir = testDataDir(tempDir(), { llm, settings: { llm: { maxRounds: 1 } } });
    const daemon = await daemons.start(dir);
    const both = await runNodeWithInput([WAITER, '--data', dir], 'list my timers\nhi\n');
    const answeredOnly = await runNodeWithInput([WAITER, '--data', dir], 'hi again\n');
    await daemons.stop(daemon);
    expect(both.stderr).toContain('tool-round limit');
    expect(both.stdout).toContain('a plain answer\n');
    expect(both.code).toBe(1);
    expect(answeredOnly.stdout).toBe('answered again\n');
    expect(answeredOnly.code, answeredOnly.stderr).toBe(0);
  });
});
