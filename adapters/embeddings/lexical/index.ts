/** Public surface of the lexical adapters: jieba as the Chinese segmenter, the WordNet reader, the hashed TF-IDF provider. */
export { segmentHan } from './jiebaSegmenter.ts';
export { WordNet, WordNetError, type WordNetOptions } from './wordNet.ts';
export {
  LexicalProvider,
  LEXICAL_VERSION,
  DEFAULT_LEXICAL_DIMENSIONS,
  type IdfTable,
  type LexicalProviderOptions,
} from './lexicalProvider.ts';
