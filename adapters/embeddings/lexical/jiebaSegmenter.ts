/** jieba as the Chinese word segmenter of the lexical tokenizer: search mode, HMM on. */
import { Jieba } from '@node-rs/jieba';
import { dict } from '@node-rs/jieba/dict.js';

let jieba: Jieba | undefined;

/** Loading the dictionary takes ~0.5 s, so it happens on first use, once per process. */
export const segmentHan = (run: string): string[] => {
  jieba ??= Jieba.withDict(dict);
  return jieba.cutForSearch(run, true);
};
