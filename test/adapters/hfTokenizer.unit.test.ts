import { describe, expect, it } from 'vitest';
import { HfTokenizer, UnsupportedTokenizer } from '../../adapters/embeddings/onnx/index.ts';
import { TINY_VOCAB, tinyTokenizerJson } from '../fixtures/onnx/makeTinyModel.ts';

const id = (token: string): number => {
  const i = TINY_VOCAB.indexOf(token);
  if (i < 0) throw new Error(`not in the tiny vocabulary: ${token}`);
  return i;
};
const ids = (...tokens: string[]): number[] => tokens.map(id);
const tiny = (maxLength?: number) => HfTokenizer.fromJson(tinyTokenizerJson(), maxLength === undefined ? {} : { maxLength });
const withField = (field: string, value: unknown) => ({ ...tinyTokenizerJson(), [field]: value });

describe('HfTokenizer (WordPiece tokenizer.json)', () => {
  it('wraps a sentence in [CLS] … [SEP], lowercases and splits punctuation', () => {
    expect(tiny().encode('The cat sat on the MAT.')).toEqual(ids('[CLS]', 'the', 'cat', 'sat', 'on', 'the', 'mat', '.', '[SEP]'));
    expect(tiny().encode('hello,world!')).toEqual(ids('[CLS]', 'hello', ',', 'world', '!', '[SEP]'));
  });

  it('splits words into greedy longest-match ## pieces', () => {
    expect(tiny().encode('playing played cats unbelievable')).toEqual(
      ids('[CLS]', 'play', '##ing', 'play', '##ed', 'cat', '##s', 'un', '##believ', '##able', '[SEP]'),
    );
  });

  it('maps a word with no full segmentation to a single [UNK]', () => {
    expect(tiny().encode('zebra playx dog')).toEqual(ids('[CLS]', '[UNK]', '[UNK]', 'dog', '[SEP]'));
  });

  it('makes each Chinese character its own token, even without spaces', () => {
    expect(tiny().encode('我爱猫')).toEqual(ids('[CLS]', '我', '爱', '猫', '[SEP]'));
    expect(tiny().encode('你好world的')).toEqual(ids('[CLS]', '你', '好', 'world', '[UNK]', '[SEP]'));
  });

  it('strips accents when lowercasing (strip_accents null follows lowercase)', () => {
    expect(tiny().encode('Café')).toEqual(ids('[CLS]', 'cafe', '[SEP]'));
  });

  it('truncates the text, never the special tokens', () => {
    expect(tiny(5).encode('the quick brown fox sat')).toEqual(ids('[CLS]', 'the', 'quick', 'brown', '[SEP]'));
    expect(tiny(5).encode('the cat playing')).toEqual(ids('[CLS]', 'the', 'cat', 'play', '[SEP]')); // cuts inside a word, as tokenizers does
    expect(tiny().maxLength).toBe(256);
    const long = tiny().encode(Array.from({ length: 400 }, () => 'cat').join(' '));
    expect(long).toHaveLength(256);
    expect(long.at(-1)).toBe(id('[SEP]'));
  });

  it('pads a batch to its longest row with [PAD] and mask 0', () => {
    const batch = tiny().encodeBatch(['cat', 'the quick brown fox']);
    expect(batch.batchSize).toBe(2);
    expect(batch.sequenceLength).toBe(6);
    expect([...batch.inputIds].map(Number)).toEqual([
      ...ids('[CLS]', 'cat', '[SEP]', '[PAD]', '[PAD]', '[PAD]'),
      ...ids('[CLS]', 'the', 'quick', 'brown', 'fox', '[SEP]'),
    ]);
    expect([...batch.attentionMask].map(Number)).toEqual([1, 1, 1, 0, 0, 0, 1, 1, 1, 1, 1, 1]);
    expect([...batch.tokenTypeIds].map(Number)).toEqual(new Array(12).fill(0));
  });

  it('reads BertProcessing as well as TemplateProcessing', () => {
    const t = HfTokenizer.fromJson(withField('post_processor', { type: 'BertProcessing', sep: ['[SEP]', 3], cls: ['[CLS]', 2] }));
    expect(t.encode('dog')).toEqual(ids('[CLS]', 'dog', '[SEP]'));
  });

  it('gives [UNK] for a word longer than max_input_chars_per_word', () => {
    const json = tinyTokenizerJson() as { model: Record<string, unknown> };
    const t = HfTokenizer.fromJson({ ...json, model: { ...json.model, max_input_chars_per_word: 3 } });
    expect(t.encode('cat play')).toEqual(ids('[CLS]', 'cat', '[UNK]', '[SEP]'));
  });

  it('refuses a non-WordPiece model, naming the type found and the supported ones', () => {
    const bpe = withField('model', { type: 'BPE', vocab: {}, merges: [] });
    expect(() => HfTokenizer.fromJson(bpe)).toThrow(UnsupportedTokenizer);
    try {
      HfTokenizer.fromJson(bpe);
    } catch (e) {
      expect(e).toMatchObject({ code: 'ONNX_TOKENIZER_UNSUPPORTED', component: 'model', found: 'BPE', supported: ['WordPiece'] });
      expect(String((e as Error).message)).toMatch(/'BPE'.*WordPiece/);
    }
  });

  it('refuses unsupported normalizer, pre-tokenizer and post-processor types', () => {
    expect(() => HfTokenizer.fromJson(withField('normalizer', { type: 'Precompiled' }))).toThrow(/normalizer type 'Precompiled'/);
    expect(() => HfTokenizer.fromJson(withField('pre_tokenizer', { type: 'Metaspace' }))).toThrow(/pre_tokenizer type 'Metaspace'/);
    expect(() => HfTokenizer.fromJson(withField('post_processor', { type: 'ByteLevel' }))).toThrow(/post_processor type 'ByteLevel'/);
  });
});
