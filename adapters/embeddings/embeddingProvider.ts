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
 * Throws `ModalityNotCovered` unless the provider's space covers `modality`; use before calling
 * an optional `embed*` method so a missing modality fails loudly instead of silently degrading.
 */
export const requireModality = (provider: EmbeddingProvider, modality: Modality): void => {
  const hasMethod = modality === 'text' || provider.embedImages !== undefined;
  if (!provider.modalities.includes(modality) || !hasMethod) throw new ModalityNotCovered(provider.fingerprint, modality);
};
