/**
 * Special files against the running daemon: the model calls files_read on a FIFO in the files
 * root. The call answers with the refusal at once (it used to hang the turn, the scheduler's
 * queue and shutdown), the model sees it, the daemon answers the next message, stops cleanly,
 * and the log replays. And a model directory whose files are /dev/zero or a FIFO: homed says so
 * and does not start (it used to read /dev/zero until memory ran out, or wait on the FIFO, deaf to
 * SIGTERM).
 */
import { execFileSync } from 'node:child_process';
import { cpSync, mkdirSync, rmSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { askSocket, logOf, testDataDir, useDaemons, verifyReplay } from '../support/homedSession.ts';
import { startLlmServer } from '../support/llmServer/index.ts';
import { hasNoStackTrace, REPO, runHomed } from '../support/processes.ts';
import { useTempDir } from '../support/tempDir.ts';

const tempDir = useTempDir();
const daemons = useDaemons();

describe('files_read of a FIFO through homed', () => {
  it('answers with the refusal quickly, and the daemon answers the next message', async () => {
    const server = await startLlmServer([
      { toolCalls: [{ id: 'call_fifo', name: 'files_read', arguments: { path: 'pipe' } }] },
      { text: 'That is a pipe, not a file.' },
      { text: 'Still here.' },
    ]);
    daemons.onCleanup(() => server.close());
    const dir = testDataDir(tempDir(), { llm: server });
    mkdirSync(join(dir, 'files'), { recursive: true });
    execFileSync('mkfifo', [join(dir, 'files', 'pipe')]);
    const daemon = await daemons.start(dir);

    const started = performance.now();
    const first = await askSocket(dir, 'Read the file called pipe');
    const took = performance.now() - started;
    expect(
      first
        .filter((r) => r.type === 'chunk')
        .map((r) => r.text)
        .join(''),
    ).toBe('That is a pipe, not a file.');
    expect(first.at(-1)).toMatchObject({ type: 'end' });
    // A hang would last until the test's timeout; the refusal takes a few file-system calls.
    expect(took).toBeLessThan(15_000);

    const toolResult = JSON.stringify(server.requests[1]!.body);
    expect(toolResult).toContain('is a FIFO, not a regular file');
    expect(toolResult).not.toMatch(/E[A-Z]{3,}:/);

    const second = await askSocket(dir, 'Are you there?');
    expect(
      second
        .filter((r) => r.type === 'chunk')
        .map((r) => r.text)
        .join(''),
    ).toBe('Still here.');

    await daemons.stop(daemon);
    const log = await logOf(dir);
    expect(log.filter((e) => e.type === 'TaskCompleted').map((e) => e.data.outcome)).toEqual(['done', 'done']);
    await verifyReplay(dir);
  });
});

describe('a model directory with hostile files through homed', () => {
  it.each([
    ['model.onnx', 'a link to /dev/zero', (path: string) => symlinkSync('/dev/zero', path)],
    ['tokenizer.json', 'a FIFO', (path: string) => execFileSync('mkfifo', [path])],
  ])('refuses to start with %s that is %s, at once and in one line, instead of reading it forever', async (file, _what, put) => {
    const model = join(tempDir(), 'model');
    cpSync(join(REPO, 'test/fixtures/onnx/tiny'), model, { recursive: true });
    rmSync(join(model, file));
    put(join(model, file));
    const dir = testDataDir(tempDir(), { settings: { memory: { embedding: { onnxDir: model } } } });
    const start = await runHomed(['run', '--data', dir]);
    expect(start.code).toBe(1);
    expect(start.stderr).toContain(`'${join(model, file)}' is not a regular file (a folder, a FIFO or a device is not read)`);
    expect(hasNoStackTrace(start.stderr)).toBe(true);
  });
});
