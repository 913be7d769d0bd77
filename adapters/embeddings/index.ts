/**
 * Public surface of the embedding layer: one provider interface whose fingerprint names a
 * vector space, the offline lexical provider, jieba and WordNet, and the SQLite vector cache.
 */
export {
  isModalityNotCovered,
  ModalityNotCovered,
  requireModality,
  type EmbeddingProvider,
  type Modality,
} from './embeddingProvider.ts';
export { VectorCache, contentHash } from './vectorCache.ts';
export * from './lexical/index.ts';
