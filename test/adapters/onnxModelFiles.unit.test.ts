/**
 * What lies in a model directory is read only when it is a regular file (or a link to one):
 * a model file that is /dev/zero, a FIFO or a folder is refused at once with what belongs
 * there, before the runtime is even looked for (so these hold without onnxruntime-node).
 */
import { execFileSync } from 'node:child_process';
import { cpSync, mkdirSync, rmSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { OnnxEmbeddingProvider } from '../../adapters/embeddings/onnx/onnxProvider.ts';
import { REPO } from '../support/processes.ts';
import { useTempDir } from '../support/tempDir.ts';

const tempDir = useTempDir();
const TINY = join(REPO, 'test/fixtures/onnx/tiny');

const failureOf = (loading: Promise<unknown>) =>
  loading.then(
    () => undefined,
    (error: { code?: string; subject?: string; message: string }) => ({ code: error.code, subject: error.subject, message: error.message }),
  );

/** The tiny model's directory with `file` replaced by what `put` makes there. */
const modelWith = (file: string, put: (path: string) => void): string => {
  const dir = join(tempDir(), 'model');
  cpSync(TINY, dir, { recursive: true });
  rmSync(join(dir, file), { force: true });
  put(join(dir, file));
  return dir;
};

const fifo = (path: string) => execFileSync('mkfifo', [path]);

describe('a model directory with hostile files', () => {
  it.each([
    ['model.onnx', 'a link to /dev/zero', (path: string) => symlinkSync('/dev/zero', path)],
    ['model.onnx', 'a FIFO', fifo],
    ['model.onnx', 'a folder', (path: string) => mkdirSync(path)],
    ['tokenizer.json', 'a FIFO', fifo],
  ])('refuses %s that is %s, naming it and what belongs there', async (file, _what, put) => {
    const dir = modelWith(file, put);
    expect(await failureOf(OnnxEmbeddingProvider.load(dir))).toEqual({
      code: 'ONNX_MODEL_FILE_INVALID',
      subject: join(dir, file),
      message: expect.stringMatching(/is not a regular file \(a folder, a FIFO or a device is not read\); it should hold /),
    });
  });

  it('refuses a hologram.json that is a FIFO, and a model directory that is not a directory', async () => {
    const dir = modelWith('hologram.json', fifo);
    expect(await failureOf(OnnxEmbeddingProvider.load(dir))).toMatchObject({
      code: 'ONNX_CONFIG_INVALID',
      subject: join(dir, 'hologram.json'),
    });
    const notADirectory = join(tempDir(), 'fifo-dir');
    fifo(notADirectory);
    expect(await failureOf(OnnxEmbeddingProvider.load(notADirectory))).toMatchObject({
      code: 'ONNX_MODEL_DIR_MISSING',
      message: expect.stringContaining('is not a directory'),
    });
  });

  it('reads a model file that is a link to a regular file, as a downloaded model directory often has', async () => {
    const dir = modelWith('model.onnx', (path) => symlinkSync(join(TINY, 'model.onnx'), path));
    const failure = await failureOf(OnnxEmbeddingProvider.load(dir));
    // Past the files: it loads, or (without the optional runtime) says the runtime is missing.
    expect(failure === undefined || failure.code === 'ONNX_RUNTIME_MISSING').toBe(true);
  });
});
