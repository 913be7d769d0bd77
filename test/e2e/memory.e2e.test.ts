/**
 * Memory through homed as a user meets it: a cli user's conversation continues across a
 * daemon restart (the turn's history is the L1 context rebuilt from the log, the recall index
 * read back from the snapshot the stop left, caught up with what came after it when the daemon
 * was killed, or rebuilt when what lies there is not one), and a model
 * directory in settings turns on dense + keyword recall with vectors in a deletable cache.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { INDEX_SNAPSHOT_FILE } from '../../actors/modules/config.ts';
import { testDataDir, useDaemons } from '../support/homedSession.ts';
import { messagesOf, startLlmServer } from '../support/llmServer/index.ts';
import { finished, REPO, runHomed, spawnNode, WAITER } from '../support/processes.ts';
import { ONNX_RUNTIME_INSTALLED } from '../support/onnxRuntime.ts';
import { useTempDir } from '../support/tempDir.ts';

const tempDir = useTempDir();
const daemons = useDaemons();

describe('memory through homed', () => {
  it("continues a cli user's conversation after a restart, from the context in the log", async () => {
    const server = await startLlmServer([{ text: 'Nice to meet you, Ada.' }, { text: 'You said your name is Ada.' }]);
    daemons.onCleanup(() => server.close());
    const dir = testDataDir(tempDir(), { llm: server });
    let daemon = await daemons.start(dir);
    expect((await finished(spawnNode([WAITER, '--data', dir, 'My name is Ada']))).stdout).toBe('Nice to meet you, Ada.\n');
    await daemons.stop(daemon);

    // The stop left the recall index for the next start, which reads it back instead of rebuilding.
    expect(statSync(join(dir, INDEX_SNAPSHOT_FILE)).mode & 0o777).toBe(0o600);
    daemon = await daemons.start(dir);
    expect(daemon.output).not.toContain('index snapshot is not used');
    expect((await finished(spawnNode([WAITER, '--data', dir, 'What is my name?']))).stdout).toBe('You said your name is Ada.\n');
    const second = JSON.stringify(server.requests[1]!.body);
    expect(second).toContain('My name is Ada');
    expect(second).toContain('Nice to meet you, Ada.');
    await daemons.stop(daemon);
    const verify = await runHomed(['replay', '--data', dir, '--verify']);
    expect(verify.stdout).toContain('memory_context: match');
    expect(verify.stdout).toMatch(
      /memory: 1 of 1 journals match \(\d+ messages re-delivered, same facts byte for byte\); \d+ decisions re-decided/,
    );
    expect(verify.code).toBe(0);
  });

  it('after a SIGKILL, the next start catches the index snapshot up with what was said since the last stop', async () => {
    const server = await startLlmServer([{ text: 'Noted.' }, { text: 'Noted again.' }, { text: 'In Lisbon, with a cat.' }]);
    daemons.onCleanup(() => server.close());
    const dir = testDataDir(tempDir(), { llm: server });
    let daemon = await daemons.start(dir);
    expect((await finished(spawnNode([WAITER, '--data', dir, 'My name is Ada']))).stdout).toBe('Noted.\n');
    await daemons.stop(daemon);
    daemon = await daemons.start(dir);
    expect((await finished(spawnNode([WAITER, '--data', dir, 'I live in Lisbon with my cat']))).stdout).toBe('Noted again.\n');
    daemon.process.kill('SIGKILL');
    await daemon.exited;

    daemon = await daemons.start(dir);
    expect(daemon.output).toMatch(/memory: caught the index snapshot up with the \d+ memory events after it/);
    expect(daemon.output).not.toContain('rebuilding the index');
    expect((await finished(spawnNode([WAITER, '--data', dir, 'Where do I live?']))).stdout).toBe('In Lisbon, with a cat.\n');
    expect(JSON.stringify(server.requests[2]!.body)).toContain('I live in Lisbon with my cat');
    await daemons.stop(daemon);
    // The stop wrote it again: the next start reads it as it is.
    daemon = await daemons.start(dir);
    expect(daemon.output).not.toMatch(/caught the index snapshot up|rebuilding the index/);
    await daemons.stop(daemon);
    const verify = await runHomed(['replay', '--data', dir, '--verify']);
    expect(verify.code, verify.stdout).toBe(0);
  });

  it('starts whatever lies where the index snapshot goes: a FIFO is passed over with a line saying so, the index rebuilt', async () => {
    const server = await startLlmServer([{ text: 'Noted.' }, { text: 'You like chess.' }]);
    daemons.onCleanup(() => server.close());
    const dir = testDataDir(tempDir(), { llm: server });
    let daemon = await daemons.start(dir);
    expect((await finished(spawnNode([WAITER, '--data', dir, 'I like chess']))).stdout).toBe('Noted.\n');
    await daemons.stop(daemon);
    rmSync(join(dir, INDEX_SNAPSHOT_FILE));
    execFileSync('mkfifo', ['-m', '600', join(dir, INDEX_SNAPSHOT_FILE)]);
    daemon = await daemons.start(dir);
    expect(daemon.output).toMatch(/memory: the index snapshot is not used \(.*is not a regular file\); rebuilding the index/);
    expect(daemon.output).toMatch(
      /memory: rebuilding the recall index from \d+ utterances\n.*memory: rebuilt the recall index in \d+\.\d s/s,
    );
    expect((await finished(spawnNode([WAITER, '--data', dir, 'What do I like?']))).stdout).toBe('You like chess.\n');
    expect(JSON.stringify(server.requests[1]!.body)).toContain('I like chess');
    await daemons.stop(daemon);
  });

  it('recalls Chinese by its words: jieba, loaded on first use, segments what was said and what is asked', async () => {
    const server = await startLlmServer([
      { text: '记下了。' },
      { toolCalls: [{ name: 'memory_recall', arguments: { query: '西红柿' } }] },
      { text: '你种了西红柿。' },
    ]);
    daemons.onCleanup(() => server.close());
    const dir = testDataDir(tempDir(), { llm: server });
    const daemon = await daemons.start(dir);
    expect((await finished(spawnNode([WAITER, '--data', dir, '我今天在花园里种了西红柿']))).stdout).toBe('记下了。\n');
    expect((await finished(spawnNode([WAITER, '--data', dir, '我种了什么？']))).stdout).toBe('你种了西红柿。\n');
    // The word is found inside the sentence, which has no spaces: only a segmenter splits it out.
    const recalled = messagesOf(server.requests[2]!).at(-1)!;
    expect(recalled.role).toBe('tool');
    expect(recalled.content).toContain('我今天在花园里种了西红柿');
    await daemons.stop(daemon);
  });

  it.skipIf(!ONNX_RUNTIME_INSTALLED)(
    'turns on dense + keyword recall with a model directory in settings, caching vectors outside the log',
    async () => {
      const server = await startLlmServer([{ text: 'ok' }]);
      daemons.onCleanup(() => server.close());
      const dir = testDataDir(tempDir(), {
        llm: server,
        settings: { memory: { embedding: { onnxDir: join(REPO, 'test/fixtures/onnx/tiny') } } },
      });
      const daemon = await daemons.start(dir);
      expect(daemon.output).toMatch(/memory: dense recall with onnx:[0-9a-f]{16}:mean:true:\d+ \(8-d\), vectors cached in vectors\.db/);
      expect((await finished(spawnNode([WAITER, '--data', dir, 'hello world']))).stdout).toBe('ok\n');
      await daemons.stop(daemon);
      expect(existsSync(join(dir, 'vectors.db'))).toBe(true);
    },
  );
});
