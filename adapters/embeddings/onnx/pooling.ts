/** Turning encoder outputs into one vector per input: masked mean or first-token pooling, L2 normalisation. Pure. */
import { OnnxEmbeddingError } from './onnxErrors.ts';

export type Pooling = 'mean' | 'cls';

/**
 * `data` has shape `[batch, dim]` (already pooled: returned row by row) or `[batch, seq, dim]`
 * (pooled here; `mask` is `[batch, seq]`, 1 for real tokens; `null` means all tokens count).
 */
export const poolOutput = (
  data: Float32Array,
  dims: readonly number[],
  mask: BigInt64Array | null,
  pooling: Pooling,
  outputName: string,
): Float32Array[] => {
  if (dims.length === 2) {
    const [batch, dim] = dims as [number, number];
    return Array.from({ length: batch }, (_, b) => data.slice(b * dim, (b + 1) * dim));
  }
  if (dims.length !== 3) {
    throw new OnnxEmbeddingError(
      'ONNX_OUTPUT_UNSUPPORTED',
      `output '${outputName}' has shape [${dims.join(', ')}]; expected [batch, dim] or [batch, sequence, dim]`,
      outputName,
    );
  }
  const [batch, seq, dim] = dims as [number, number, number];
  return Array.from({ length: batch }, (_, b) => {
    const out = new Float32Array(dim);
    if (pooling === 'cls') return data.slice(b * seq * dim, b * seq * dim + dim);
    let count = 0;
    for (let s = 0; s < seq; s++) {
      if (mask && mask[b * seq + s] === 0n) continue;
      count++;
      const base = (b * seq + s) * dim;
      for (let d = 0; d < dim; d++) out[d]! += data[base + d]!;
    }
    for (let d = 0; d < dim; d++) out[d]! /= Math.max(count, 1);
    return out;
  });
};

/** Unit length; the zero vector stays zero. */
export const l2Normalize = (v: Float32Array): Float32Array => {
  let sum = 0;
  for (const x of v) sum += x * x;
  const norm = Math.sqrt(sum);
  return norm === 0 ? v : v.map((x) => x / norm);
};
