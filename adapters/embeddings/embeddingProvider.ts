/**
 * One interface for every embedding space. A provider's `fingerprint` names its space: two
 * vectors are comparable only when they come from providers with the same fingerprint, and a
 * provider asked for a modality its space does not cover throws `ModalityNotCovered` rather
 * than answer with another model's vector.
 */
import { HologramError } from '../../events/index.ts';

export type Modality = 'text' | 'image';

export interface EmbeddingProvider {
  /** Changes whenever anything that changes the vectors changes (model, dimensions, tokenizer, fitted weights). */
  readonly fingerprint: string;
  readonly dimensions: number;
  readonly modalities: readonly Modality[];
  /** One vector of length `dimensions` per text, in order. */
  embedTexts(texts: readonly string[]): Promise<Float32Array[]>;
  /** Present only on providers whose space covers images; otherwise throws `ModalityNotCovered`. */
  embedImages?(images: readonly Uint8Array[]): Promise<Float32Array[]>;
}

/** Thrown when a provider is asked to embed a modality outside its space. */
export class ModalityNotCovered extends HologramError {
  readonly code = 'MODALITY_NOT_COVERED';
  constructor(
    readonly fingerprint: string,
    readonly modality: Modality,
  ) {
    super(
      `the embedding space '${fingerprint}' does not cover ${modality}; ` +
        `configure an embedding provider whose space covers ${modality} (vectors from another space are never substituted)`,
    );
  }
}

export const isModalityNotCovered = (e: unknown): e is ModalityNotCovered => e instanceof ModalityNotCovered;

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

/**
 * Throws `ModalityNotCovered` unless the provider's space covers `modality`; use before calling
 * an optional `embed*` method so a missing modality fails loudly instead of silently degrading.
 */
export const requireModality = (provider: EmbeddingProvider, modality: Modality): void => {
  const hasMethod = modality === 'text' || provider.embedImages !== undefined;
  if (!provider.modalities.includes(modality) || !hasMethod) throw new ModalityNotCovered(provider.fingerprint, modality);
};
