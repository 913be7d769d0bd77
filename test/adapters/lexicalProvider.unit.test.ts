/** The offline lexical provider: hashed TF-IDF vectors, fingerprints, refusal of images. */
import { describe, expect, it } from 'vitest';
import { memoryTokenizer } from '../../actors/memory/lexicon.ts';
import { cosine, TOKENIZER_VERSION } from '../../projections/index.ts';
import {
  isModalityNotCovered,
  LexicalProvider,
  ModalityNotCovered,
  requireModality,
  type EmbeddingProvider,
} from '../../adapters/embeddings/index.ts';

const norm = (v: Float32Array): number => Math.sqrt(v.reduce((s, x) => s + x * x, 0));

const CORPUS = [
  'I went hiking with my dog on Saturday',
  'My dog loves the park near the lake',
  'We baked a chocolate cake for the party',
  'The park was crowded on Saturday',
  'Painting the sunrise at the lake this morning',
];

describe('cosine', () => {
  it('is the normalised dot product, 0 for a zero vector, and refuses mixed lengths', () => {
    expect(cosine(new Float32Array([1, 0]), new Float32Array([1, 1]))).toBeCloseTo(Math.SQRT1_2, 6);
    expect(cosine(new Float32Array([1, 2]), new Float32Array([-1, -2]))).toBeCloseTo(-1, 6);
    expect(cosine(new Float32Array([0, 0]), new Float32Array([1, 1]))).toBe(0);
    expect(() => cosine(new Float32Array(2), new Float32Array(3))).toThrow(RangeError);
  });
});

describe('LexicalProvider', () => {
  const provider = new LexicalProvider({ tokenizer: memoryTokenizer });

  it('gives the same text the same unit vector, across calls and instances', async () => {
    const [v1] = await provider.embedTexts(['Caroline went to the LGBTQ support group']);
    const [v2] = await new LexicalProvider({ tokenizer: memoryTokenizer }).embedTexts(['Caroline went to the LGBTQ support group']);
    expect(v1).toHaveLength(4096);
    expect(v2).toEqual(v1);
    expect(norm(v1!)).toBeCloseTo(1, 5);
  });

  it('puts similar texts closer than unrelated ones, in English and in Chinese', async () => {
    const [a, b, c] = await provider.embedTexts([
      'I love eating hotpot in Beijing',
      'We ate hotpot in Beijing last night',
      'The quarterly tax report is due on Friday',
    ]);
    expect(cosine(a!, b!)).toBeGreaterThan(cosine(a!, c!));
    expect(cosine(a!, b!)).toBeGreaterThan(0.2);
    const [x, y, z] = await provider.embedTexts(['我喜欢在北京吃火锅', '我们昨晚在北京吃了火锅', '明天要交季度税务报告']);
    expect(cosine(x!, y!)).toBeGreaterThan(cosine(x!, z!));
  });

  it('uses signed hashing: buckets can be negative, vectors stay normalised in small spaces', () => {
    const small = new LexicalProvider({ tokenizer: memoryTokenizer, dimensions: 8 });
    const v = small.embedText('one two three four five six seven eight nine ten eleven twelve');
    expect(v).toHaveLength(8);
    expect([...v].some((x) => x < 0)).toBe(true);
    expect(norm(v)).toBeCloseTo(1, 5);
  });

  it('weights repeated terms sublinearly (1 + ln tf)', () => {
    const v = provider.embedText('garden garden garden pottery');
    // two distinct terms (unless they collide): weights 1 + ln 3 and 1
    const nonzero = [...v]
      .filter((x) => x !== 0)
      .map(Math.abs)
      .sort((p, q) => q - p);
    expect(nonzero).toHaveLength(2);
    expect(nonzero[0]! / nonzero[1]!).toBeCloseTo(1 + Math.log(3), 5);
  });

  it('embeds text without tokens as the zero vector', async () => {
    const [v] = await provider.embedTexts(['the, of!']);
    expect(norm(v!)).toBe(0);
  });

  it('without a fit every idf is 1; a fit gives smoothed idf ln((1+N)/(1+df)) + 1', () => {
    expect(provider.idf('dog')).toBe(1);
    const fitted = provider.fit(CORPUS);
    expect(fitted.idf('dog')).toBeCloseTo(Math.log(6 / 3) + 1, 12); // dog in 2 of 5
    expect(fitted.idf('cake')).toBeCloseTo(Math.log(6 / 2) + 1, 12); // cake in 1 of 5
    expect(fitted.idf('unseen')).toBeCloseTo(Math.log(6) + 1, 12);
  });

  it('a fit down-weights common terms, changing the vectors', () => {
    const fitted = new LexicalProvider({ tokenizer: memoryTokenizer }).fit([...CORPUS, 'park', 'park', 'park']);
    const before = cosine(provider.embedText('park cake'), provider.embedText('park hiking'));
    const after = cosine(fitted.embedText('park cake'), fitted.embedText('park hiking'));
    expect(after).toBeLessThan(before);
  });

  it('changes its fingerprint with everything that changes the vectors, and only then', () => {
    expect(provider.fingerprint).toMatch(new RegExp(`^lexical-tfidf-v1:d4096:s0:${TOKENIZER_VERSION}:idf-none$`));
    const fingerprints = [
      provider.fingerprint,
      new LexicalProvider({ tokenizer: memoryTokenizer, dimensions: 1024 }).fingerprint,
      new LexicalProvider({ tokenizer: memoryTokenizer, seed: 7 }).fingerprint,
      provider.fit(CORPUS).fingerprint,
      provider.fit(CORPUS.slice(1)).fingerprint,
      new LexicalProvider({ tokenizer: memoryTokenizer, dimensions: 1024 }).fit(CORPUS).fingerprint,
    ];
    expect(new Set(fingerprints).size).toBe(fingerprints.length);
    expect(new LexicalProvider({ tokenizer: memoryTokenizer }).fingerprint).toBe(provider.fingerprint);
    expect(provider.fit(CORPUS).fingerprint).toBe(new LexicalProvider({ tokenizer: memoryTokenizer }).fit([...CORPUS]).fingerprint);
  });

  it('a different seed is a different space', () => {
    const a = provider.embedText('pottery class on Tuesday');
    const b = new LexicalProvider({ tokenizer: memoryTokenizer, seed: 7 }).embedText('pottery class on Tuesday');
    expect(cosine(a, b)).toBeLessThan(0.9);
  });

  it('covers text only and refuses images with MODALITY_NOT_COVERED', async () => {
    expect(provider.modalities).toEqual(['text']);
    const refusal = provider.embedImages(new Array(1).fill(new Uint8Array([0x89, 0x50])));
    await expect(refusal).rejects.toBeInstanceOf(ModalityNotCovered);
    await expect(refusal).rejects.toMatchObject({ code: 'MODALITY_NOT_COVERED', modality: 'image', fingerprint: provider.fingerprint });
    const error = await refusal.catch((e: unknown) => e);
    expect(isModalityNotCovered(error)).toBe(true);
    expect((error as Error).message).toContain(provider.fingerprint);
    expect((error as Error).message).toMatch(/image.*configure an embedding provider whose space covers image/);
  });

  it('requireModality refuses a modality outside the space, or a missing embed method', () => {
    expect(() => requireModality(provider, 'text')).not.toThrow();
    expect(() => requireModality(provider, 'image')).toThrow(ModalityNotCovered);
    const claimsImages: EmbeddingProvider = { fingerprint: 'x', dimensions: 1, modalities: ['text', 'image'], embedTexts: async () => [] };
    expect(() => requireModality(claimsImages, 'image')).toThrow(/'x' does not cover image/);
  });
});
