/**
 * A Hugging Face `tokenizer.json` (tokenizers library format) for WordPiece (BERT-style) models.
 * Pure: parses already-read JSON and encodes text the way `tokenizers` does for BERT, producing
 * batch-padded `input_ids`, `attention_mask` and `token_type_ids`. Anything else is refused
 * with `UnsupportedTokenizer` naming the type found and the ones supported.
 */
import { bertNormalize, bertPreTokenize, stripAccents, type BertNormalizerOptions } from './bertNormalize.ts';
import { OnnxEmbeddingError, UnsupportedTokenizer } from './onnxErrors.ts';

export const DEFAULT_MAX_LENGTH = 256;

export const SUPPORTED = {
  model: ['WordPiece'],
  normalizer: ['BertNormalizer', 'Lowercase', 'StripAccents', 'NFD', 'NFC', 'NFKC', 'NFKD', 'Sequence', 'none'],
  pre_tokenizer: ['BertPreTokenizer', 'WhitespaceSplit', 'Sequence', 'none'],
  post_processor: ['TemplateProcessing', 'BertProcessing', 'none'],
} as const;

/** One batch, row-major `[batch, sequence]`, padded to the longest row. */
export interface EncodedBatch {
  readonly batchSize: number;
  readonly sequenceLength: number;
  readonly inputIds: BigInt64Array;
  readonly attentionMask: BigInt64Array;
  readonly tokenTypeIds: BigInt64Array;
}

type Json = Record<string, unknown>;
type Normalize = (text: string) => string;
type PreTokenize = (text: string) => string[];
interface Specials {
  readonly before: readonly number[];
  readonly after: readonly number[];
}

const asObject = (v: unknown): Json | null => (v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Json) : null);
const typeOf = (v: unknown): string => {
  const o = asObject(v);
  return o === null ? 'none' : String(o.type);
};
const bad = (what: string): OnnxEmbeddingError =>
  new OnnxEmbeddingError('ONNX_CONFIG_INVALID', `tokenizer.json: ${what}; re-export it with the tokenizers library`, what);

const buildNormalizer = (spec: unknown): Normalize => {
  const o = asObject(spec);
  switch (typeOf(spec)) {
    case 'none':
      return (t) => t;
    case 'BertNormalizer': {
      const lowercase = o!.lowercase !== false;
      const options: BertNormalizerOptions = {
        cleanText: o!.clean_text !== false,
        handleChineseChars: o!.handle_chinese_chars !== false,
        stripAccents: typeof o!.strip_accents === 'boolean' ? (o!.strip_accents as boolean) : lowercase,
        lowercase,
      };
      return (t) => bertNormalize(t, options);
    }
    case 'Lowercase':
      return (t) => t.toLowerCase();
    case 'StripAccents':
      return stripAccents;
    case 'NFD':
    case 'NFC':
    case 'NFKC':
    case 'NFKD': {
      const form = typeOf(spec) as 'NFD' | 'NFC' | 'NFKC' | 'NFKD';
      return (t) => t.normalize(form);
    }
    case 'Sequence': {
      const parts = (Array.isArray(o!.normalizers) ? o!.normalizers : []).map(buildNormalizer);
      return (t) => parts.reduce((acc, f) => f(acc), t);
    }
    default:
      throw new UnsupportedTokenizer('normalizer', typeOf(spec), SUPPORTED.normalizer);
  }
};

const buildPreTokenizer = (spec: unknown): PreTokenize => {
  const o = asObject(spec);
  switch (typeOf(spec)) {
    case 'none':
    case 'WhitespaceSplit':
      return (t) => t.split(/\s+/u).filter((w) => w.length > 0);
    case 'BertPreTokenizer':
      return bertPreTokenize;
    case 'Sequence': {
      const parts = (Array.isArray(o!.pretokenizers) ? o!.pretokenizers : []).map(buildPreTokenizer);
      return (t) => parts.reduce<string[]>((words, f) => words.flatMap(f), [t]);
    }
    default:
      throw new UnsupportedTokenizer('pre_tokenizer', typeOf(spec), SUPPORTED.pre_tokenizer);
  }
};

const buildSpecials = (spec: unknown, vocab: ReadonlyMap<string, number>): Specials => {
  const o = asObject(spec);
  const idOf = (token: string): number => {
    const id = vocab.get(token);
    if (id === undefined) throw bad(`special token '${token}' is not in the vocabulary`);
    return id;
  };
  switch (typeOf(spec)) {
    case 'none':
      return { before: [], after: [] };
    case 'BertProcessing': {
      const pair = (v: unknown): number =>
        Array.isArray(v) && typeof v[1] === 'number' ? v[1] : idOf(String(Array.isArray(v) ? v[0] : v));
      return { before: [pair(o!.cls)], after: [pair(o!.sep)] };
    }
    case 'TemplateProcessing': {
      const single = Array.isArray(o!.single) ? (o!.single as unknown[]) : [];
      const table = asObject(o!.special_tokens) ?? {};
      const before: number[] = [];
      const after: number[] = [];
      let seenSequence = false;
      for (const piece of single) {
        const p = asObject(piece) ?? {};
        if ('Sequence' in p) {
          seenSequence = true;
          continue;
        }
        const name = String(asObject(p.SpecialToken)?.id);
        const ids = asObject(table[name])?.ids;
        const resolved = Array.isArray(ids) ? ids.map(Number) : [idOf(name)];
        (seenSequence ? after : before).push(...resolved);
      }
      return { before, after };
    }
    default:
      throw new UnsupportedTokenizer('post_processor', typeOf(spec), SUPPORTED.post_processor);
  }
};

/** WordPiece: greedy longest-match-first; a word with any unmatched remainder becomes the unknown token. */
const wordPiece = (word: string, vocab: ReadonlyMap<string, number>, prefix: string, unkId: number, maxChars: number): number[] => {
  const chars = [...word];
  if (chars.length > maxChars) return [unkId];
  const ids: number[] = [];
  let start = 0;
  while (start < chars.length) {
    let end = chars.length;
    let found: number | undefined;
    while (start < end) {
      const piece = (start > 0 ? prefix : '') + chars.slice(start, end).join('');
      found = vocab.get(piece);
      if (found !== undefined) break;
      end--;
    }
    if (found === undefined) return [unkId];
    ids.push(found);
    start = end;
  }
  return ids;
};

export class HfTokenizer {
  private constructor(
    private readonly vocab: ReadonlyMap<string, number>,
    private readonly normalize: Normalize,
    private readonly preTokenize: PreTokenize,
    private readonly specials: Specials,
    private readonly prefix: string,
    private readonly unkId: number,
    private readonly maxInputCharsPerWord: number,
    readonly padId: number,
    readonly maxLength: number,
  ) {}

  /**
   * Build from the parsed contents of a `tokenizer.json`.
   *
   * @example HfTokenizer.fromJson(JSON.parse(readFileSync('tokenizer.json', 'utf8')), { maxLength: 128 })
   */
  static fromJson(json: unknown, options: { maxLength?: number } = {}): HfTokenizer {
    const root = asObject(json);
    if (root === null) throw bad('the top level is not an object');
    const model = asObject(root.model);
    const modelType = model === null ? 'none' : String(model.type ?? 'none');
    if (model === null || modelType !== 'WordPiece') throw new UnsupportedTokenizer('model', modelType, SUPPORTED.model);
    const vocabJson = asObject(model.vocab);
    if (vocabJson === null) throw bad('model.vocab is not an object of token → id');
    const vocab = new Map<string, number>(Object.entries(vocabJson).map(([t, id]) => [t, Number(id)]));
    for (const added of Array.isArray(root.added_tokens) ? root.added_tokens : []) {
      const a = asObject(added);
      if (a && typeof a.content === 'string' && typeof a.id === 'number') vocab.set(a.content, a.id);
    }
    const unkToken = String(model.unk_token ?? '[UNK]');
    const unkId = vocab.get(unkToken);
    if (unkId === undefined) throw bad(`unk_token '${unkToken}' is not in the vocabulary`);
    const padding = asObject(root.padding);
    const padId = typeof padding?.pad_id === 'number' ? (padding.pad_id as number) : (vocab.get('[PAD]') ?? 0);
    const truncation = asObject(root.truncation);
    const maxLength =
      options.maxLength ?? (typeof truncation?.max_length === 'number' ? (truncation.max_length as number) : DEFAULT_MAX_LENGTH);
    const specials = buildSpecials(root.post_processor, vocab);
    if (maxLength <= specials.before.length + specials.after.length) {
      throw new OnnxEmbeddingError(
        'ONNX_CONFIG_INVALID',
        `maxLength ${maxLength} leaves no room for text between the special tokens`,
        String(maxLength),
      );
    }
    return new HfTokenizer(
      vocab,
      buildNormalizer(root.normalizer),
      buildPreTokenizer(root.pre_tokenizer),
      specials,
      String(model.continuing_subword_prefix ?? '##'),
      unkId,
      Number(model.max_input_chars_per_word ?? 100),
      padId,
      maxLength,
    );
  }

  /** Token ids of one text with special tokens, truncated to `maxLength` (the text is cut, never the specials). */
  encode(text: string): number[] {
    const words = this.preTokenize(this.normalize(text));
    const room = this.maxLength - this.specials.before.length - this.specials.after.length;
    const ids: number[] = [];
    for (const word of words) {
      if (ids.length >= room) break;
      ids.push(...wordPiece(word, this.vocab, this.prefix, this.unkId, this.maxInputCharsPerWord));
    }
    return [...this.specials.before, ...ids.slice(0, room), ...this.specials.after];
  }

  /** Encode a batch, padding every row to the longest with the pad id and mask 0. */
  encodeBatch(texts: readonly string[]): EncodedBatch {
    const rows = texts.map((t) => this.encode(t));
    const sequenceLength = Math.max(1, ...rows.map((r) => r.length));
    const size = rows.length * sequenceLength;
    const inputIds = new BigInt64Array(size).fill(BigInt(this.padId));
    const attentionMask = new BigInt64Array(size);
    rows.forEach((row, b) => {
      row.forEach((id, s) => {
        inputIds[b * sequenceLength + s] = BigInt(id);
        attentionMask[b * sequenceLength + s] = 1n;
      });
    });
    return { batchSize: rows.length, sequenceLength, inputIds, attentionMask, tokenTypeIds: new BigInt64Array(size) };
  }

  /** The id of a token, if the vocabulary has it (for tests and diagnostics). */
  idOf(token: string): number | undefined {
    return this.vocab.get(token);
  }
}
