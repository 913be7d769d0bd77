/** Recall: the retrieval index over every memory tier, how a query weighs items, and the lexical tokenizer it ranks with. Pure. */
export * from './lexical/tokenize.ts';
export { porterStem } from './lexical/porterStemmer.ts';
export { ENGLISH_STOP_WORDS } from './lexical/englishStopWords.ts';
export { CHINESE_STOP_WORDS } from './lexical/chineseStopWords.ts';
export { ENGLISH_IRREGULAR_BASE, ENGLISH_IRREGULAR_PLURALS } from './lexical/englishIrregulars.ts';
export { Bm25Index, DEFAULT_BM25, type Bm25Document, type Bm25Hit, type Bm25Options } from './bm25Index.ts';
export * from './vectors.ts';
export * from './recallIndex.ts';
export * from './recallQuery.ts';
export * from './spokenOfTime.ts';
export * from './recallWeights.ts';
export * from './utteranceSequence.ts';
export * from './memoryIndex.ts';
export * from './recall.ts';
