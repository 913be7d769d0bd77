/** jieba as the Chinese word segmenter of the lexical tokenizer: search mode, HMM on. */
import { createRequire } from 'node:module';
// The addon itself loads with the daemon, so a broken install stops it at start, not at the first Chinese message.
import { Jieba } from '@node-rs/jieba';

const requirePackage = createRequire(import.meta.url);
let jieba: Jieba | undefined;

/**
 * The dictionary is loaded on first use, once per process: it takes ~0.5 s, and its module
 * reads 11 MB of files into memory as soon as it is imported, which a memory that never meets
 * Chinese text would carry for nothing.
 */
const loadJieba = (): Jieba => {
  const { dict } = requirePackage('@node-rs/jieba/dict.js') as { dict: Uint8Array };
  return Jieba.withDict(dict);
};

export const segmentHan = (run: string): string[] => {
  jieba ??= loadJieba();
  return jieba.cutForSearch(run, true);
};
