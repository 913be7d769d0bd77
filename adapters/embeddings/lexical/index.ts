/** Public surface of the lexical layer: tokenizer, Porter stemmer, BM25 index, hashed TF-IDF provider. */
export { tokenize, TOKENIZER_VERSION } from './tokenize.ts';
export { porterStem } from './porterStemmer.ts';
export { ENGLISH_STOP_WORDS } from './englishStopWords.ts';
export { CHINESE_STOP_WORDS } from './chineseStopWords.ts';
export { Bm25Index, DEFAULT_BM25, type Bm25Document, type Bm25Hit, type Bm25Options } from './bm25Index.ts';
export {
  LexicalProvider,
  LEXICAL_VERSION,
  DEFAULT_LEXICAL_DIMENSIONS,
  type IdfTable,
  type LexicalProviderOptions,
} from './lexicalProvider.ts';
