/** Without the optional onnxruntime-node package, asking for dense recall says what to install. */
import { describe, expect, it, vi } from 'vitest';

vi.mock('onnxruntime-node', () => {
  throw new Error("Cannot find package 'onnxruntime-node'");
});

describe('loadOnnxRuntime without the package', () => {
  it('fails with a typed error naming the package and the two ways out', async () => {
    const { loadOnnxRuntime } = await import('../../adapters/embeddings/onnx/onnxRuntime.ts');
    const error = await loadOnnxRuntime().catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'ONNX_RUNTIME_MISSING' });
    expect((error as Error).message).toContain('npm run install:onnx');
    expect((error as Error).message).toContain('remove memory.embedding.onnxDir');
  });
});
