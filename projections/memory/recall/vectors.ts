/** Vector math of dense recall. Pure. */

/**
 * Cosine similarity of two vectors of the same length; 0 when either is all zeros.
 *
 * @example cosine(new Float32Array([1, 0]), new Float32Array([1, 1])) // ≈ 0.7071
 */
export const cosine = (a: Float32Array, b: Float32Array): number => {
  if (a.length !== b.length) {
    throw new RangeError(`cosine of vectors of different lengths (${a.length} and ${b.length}): they come from different spaces`);
  }
  let dot = 0;
  let na = 0;
  let nb = 0;
  for (let i = 0; i < a.length; i++) {
    const x = a[i]!;
    const y = b[i]!;
    dot += x * y;
    na += x * x;
    nb += y * y;
  }
  return na === 0 || nb === 0 ? 0 : dot / Math.sqrt(na * nb);
};
