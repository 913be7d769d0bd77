/**
 * Memory through homed as a user meets it: a cli user's conversation continues across a
 * daemon restart (the turn's history is the L1 context rebuilt from the log), and a model
 * directory in settings turns on dense + keyword recall with vectors in a deletable cache.
 */
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { ChildProcess } from 'node:child_process';
import { startLlmServer, type LlmServer } from '../support/llmServer/index.ts';
import { finished, HOMED, REPO, runHomed, spawnNode, waitForLine, WAITER } from '../support/processes.ts';
import { useTempDir } from '../support/tempDir.ts';

const tempDir = useTempDir();
const cleanups: (() => Promise<unknown> | undefined)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const startDaemon = async (dir: string): Promise<{ daemon: ChildProcess; output: string }> => {
  const daemon = spawnNode([HOMED, 'run', '--data', dir]);
  const done = finished(daemon);
  cleanups.push(async () => {
    if (daemon.exitCode === null && daemon.signalCode === null) daemon.kill('SIGINT');
    await done;
  });
  const output = await waitForLine(daemon, /homed: ready/);
  return { daemon, output };
};

const stop = async (daemon: ChildProcess) => {
  daemon.kill('SIGINT');
  expect((await finished(daemon)).code).toBe(0);
};

const dataDir = (server: LlmServer, extra: Record<string, unknown> = {}) => {
  const dir = join(tempDir(), 'data');
  mkdirSync(dir, { recursive: true });
  writeFileSync(
    join(dir, 'settings.json'),
    JSON.stringify({ llm: { sources: [{ name: 'local', adapter: 'openai', baseUrl: server.baseUrl('openai'), model: 'm' }] }, ...extra }),
  );
  return dir;
};

describe('memory through homed', () => {
  it("continues a cli user's conversation after a restart, from the context in the log", async () => {
    const server = await startLlmServer([{ text: 'Nice to meet you, Ada.' }, { text: 'You said your name is Ada.' }]);
    cleanups.push(() => server.close());
    const dir = dataDir(server);
    let { daemon } = await startDaemon(dir);
    expect((await finished(spawnNode([WAITER, '--data', dir, 'My name is Ada']))).stdout).toBe('Nice to meet you, Ada.\n');
    await stop(daemon);

    ({ daemon } = await startDaemon(dir));
    expect((await finished(spawnNode([WAITER, '--data', dir, 'What is my name?']))).stdout).toBe('You said your name is Ada.\n');
    const second = JSON.stringify(server.requests[1]!.body);
    expect(second).toContain('My name is Ada');
    expect(second).toContain('Nice to meet you, Ada.');
    await stop(daemon);
    const verify = await runHomed(['replay', '--data', dir, '--verify']);
    expect(verify.stdout).toContain('memory_context: match');
    expect(verify.stdout).toMatch(
      /memory: 1 of 1 journals match \(\d+ messages re-delivered, same facts byte for byte\); \d+ decisions re-decided/,
    );
    expect(verify.code).toBe(0);
  });

  it('turns on dense + keyword recall with a model directory in settings, caching vectors outside the log', async () => {
    const server = await startLlmServer([{ text: 'ok' }]);
    cleanups.push(() => server.close());
    const dir = dataDir(server, { memory: { embedding: { onnxDir: join(REPO, 'test/fixtures/onnx/tiny') } } });
    const { daemon, output } = await startDaemon(dir);
    expect(output).toMatch(/memory: dense recall with onnx:[0-9a-f]{16}:mean:true:\d+ \(8-d\), vectors cached in vectors\.db/);
    expect((await finished(spawnNode([WAITER, '--data', dir, 'hello world']))).stdout).toBe('ok\n');
    await stop(daemon);
    expect(existsSync(join(dir, 'vectors.db'))).toBe(true);
  });
});
