/**
 * A text-only embedding provider that needs no model and works offline: hashed TF-IDF.
 * Tokens (of the tokenizer given: the memory's, see actors/memory/lexicon.ts) are feature-hashed with a sign into `dimensions` buckets, weighted by
 * sublinear tf (1 + ln tf) × idf, and L2-normalised. Deterministic; the fingerprint encodes
 * everything that shapes a vector (version, dimensions, seed, tokenizer, fitted idf).
 */
import { ModalityNotCovered, type EmbeddingProvider, type Modality } from '../embeddingProvider.ts';
import { hash64Hex, hashFeature } from './featureHash.ts';

/** Bump when the vector construction here changes. */
export const LEXICAL_VERSION = 'lexical-tfidf-v1';

/** Document frequencies of a fitted corpus. */
export type IdfTable = Readonly<{ documents: number; df: ReadonlyMap<string, number> }>;

export type LexicalProviderOptions = Readonly<{
  /** Splits text into terms; its version goes into the fingerprint. */
  tokenizer: Readonly<{ tokenize: (text: string) => readonly string[]; version: string }>;
  /** Number of hash buckets (vector length); default 4096. */
  dimensions?: number;
  /** Hash seed; different seeds give unrelated spaces. Default 0. */
  seed?: number;
  /** Fitted document frequencies; without them every term has idf 1. */
  idf?: IdfTable;
}>;

export const DEFAULT_LEXICAL_DIMENSIONS = 4096;

const idfFingerprint = (idf: IdfTable | undefined): string => {
  if (idf === undefined) return 'idf-none';
  const entries = [...idf.df].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return `idf-${hash64Hex(`${idf.documents}\n${entries.map(([t, n]) => `${t}\t${n}`).join('\n')}`)}`;
};

export class LexicalProvider implements EmbeddingProvider {
  readonly dimensions: number;
  readonly seed: number;
  readonly modalities: readonly Modality[] = ['text'];
  readonly fingerprint: string;
  private readonly idfTable: IdfTable | undefined;
  private readonly tokenize: (text: string) => readonly string[];

  constructor(private readonly options: LexicalProviderOptions) {
    this.tokenize = options.tokenizer.tokenize;
    this.dimensions = options.dimensions ?? DEFAULT_LEXICAL_DIMENSIONS;
    this.seed = options.seed ?? 0;
    if (!Number.isInteger(this.dimensions) || this.dimensions < 1) {
      throw new RangeError(`lexical provider dimensions must be a positive integer, got ${this.dimensions}`);
    }
    if (!Number.isInteger(this.seed)) throw new RangeError(`lexical provider seed must be an integer, got ${this.seed}`);
    this.idfTable = options.idf;
    this.fingerprint = `${LEXICAL_VERSION}:d${this.dimensions}:s${this.seed}:${options.tokenizer.version}:${idfFingerprint(options.idf)}`;
  }

  /**
   * A new provider with idf fitted on `texts` (same dimensions and seed; a new fingerprint).
   *
   * @example const provider = new LexicalProvider({ tokenizer }).fit(corpus)
   */
  fit(texts: readonly string[]): LexicalProvider {
    const df = new Map<string, number>();
    for (const text of texts) for (const term of new Set(this.tokenize(text))) df.set(term, (df.get(term) ?? 0) + 1);
    return new LexicalProvider({ ...this.options, idf: { documents: texts.length, df } });
  }

  /** Smoothed idf, ln((1 + N) / (1 + df)) + 1; 1 when not fitted. */
  idf(term: string): number {
    if (this.idfTable === undefined) return 1;
    const df = this.idfTable.df.get(term) ?? 0;
    return Math.log((1 + this.idfTable.documents) / (1 + df)) + 1;
  }

  /** The vector of one text; all zeros when the text has no tokens. */
  embedText(text: string): Float32Array {
    const tf = new Map<string, number>();
    for (const t of this.tokenize(text)) tf.set(t, (tf.get(t) ?? 0) + 1);
    const acc = new Map<number, number>(); // sparse: bucket → weight
    for (const [term, count] of tf) {
      const { bucket, sign } = hashFeature(term, this.dimensions, this.seed);
      acc.set(bucket, (acc.get(bucket) ?? 0) + sign * (1 + Math.log(count)) * this.idf(term));
    }
    let norm = 0;
    for (const x of acc.values()) norm += x * x;
    const vector = new Float32Array(this.dimensions);
    if (norm === 0) return vector;
    const scale = 1 / Math.sqrt(norm);
    for (const [bucket, x] of acc) vector[bucket] = x * scale;
    return vector;
  }

  async embedTexts(texts: readonly string[]): Promise<Float32Array[]> {
    return texts.map((t) => this.embedText(t));
  }

  /** Always rejects: a lexical space has no image coordinates. */
  async embedImages(_images: readonly Uint8Array[]): Promise<Float32Array[]> {
    throw new ModalityNotCovered(this.fingerprint, 'image');
  }
}
