import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { requireModality } from '../../adapters/embeddings/embeddingProvider.ts';
import { encodePpm, OnnxEmbeddingProvider, type RawRgbImage } from '../../adapters/embeddings/onnx/index.ts';
import { encodeModel, DataType } from '../fixtures/onnx/protobufWriter.ts';
import { ONNX_RUNTIME_INSTALLED } from '../support/onnxRuntime.ts';
import { TINY_DIMENSIONS, TINY_VOCAB, textGraph, visionGraph, writeTinyFixtures } from '../fixtures/onnx/makeTinyModel.ts';

const FIXTURES = join(import.meta.dirname, '../fixtures/onnx');
const TINY = join(FIXTURES, 'tiny');
const TINY_CLIP = join(FIXTURES, 'tiny-clip');
const scratch = mkdtempSync(join(tmpdir(), 'hologram-onnx-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

// The fixture's table formula, restated here so the expected vectors do not come from the code under test.
const table = (i: number, j: number): number => (((i * 7 + j * 3 + 1) % 13) - 6) / 8;
const projection = (c: number, j: number): number => (((c * 5 + j * 2 + 1) % 7) - 3) / 4;
const normalized = (v: number[]): number[] => {
  const n = Math.hypot(...v);
  return v.map((x) => x / n);
};
const expectedText = (...tokens: string[]): number[] => {
  const rows = ['[CLS]', ...tokens, '[SEP]'].map((t) => TINY_VOCAB.indexOf(t));
  return normalized(Array.from({ length: TINY_DIMENSIONS }, (_, j) => rows.reduce((s, i) => s + table(i, j), 0) / rows.length));
};
const expectClose = (actual: Float32Array, expected: number[]): void => {
  expect(actual).toHaveLength(expected.length);
  for (const [j, x] of actual.entries()) expect(x).toBeCloseTo(expected[j]!, 6);
};
const codeOf = async (p: Promise<unknown>): Promise<unknown> =>
  p.then(
    () => 'resolved',
    (e: unknown) => e,
  );

describe.skipIf(!ONNX_RUNTIME_INSTALLED)('OnnxEmbeddingProvider on the tiny generated sentence-transformer', () => {
  it('ships fixtures byte-identical to what makeTinyModel.ts generates', () => {
    writeTinyFixtures(join(scratch, 'regen'));
    for (const file of ['tiny/model.onnx', 'tiny/tokenizer.json', 'tiny-clip/vision_model.onnx', 'tiny-clip/hologram.json']) {
      expect(readFileSync(join(scratch, 'regen', file)).equals(readFileSync(join(FIXTURES, file))), file).toBe(true);
    }
  });

  it('returns the mask-weighted mean of the token rows, L2-normalised, for every text of a padded batch', async () => {
    const p = await OnnxEmbeddingProvider.load(TINY);
    expect(p.dimensions).toBe(8);
    expect(p.modalities).toEqual(['text']);
    const [short, long, chinese, unknown] = await p.embedTexts(['Cat', 'the quick brown fox sat on the mat', '我爱猫', 'zebra']);
    expectClose(short!, expectedText('cat'));
    expectClose(long!, expectedText('the', 'quick', 'brown', 'fox', 'sat', 'on', 'the', 'mat'));
    expectClose(chinese!, expectedText('我', '爱', '猫'));
    expectClose(unknown!, expectedText('[UNK]'));
    // The same text alone (no padding) gives the same vector as inside the padded batch.
    expectClose((await p.embedTexts(['cat']))[0]!, expectedText('cat'));
    await p.close();
  });

  it('splits large inputs into batches without changing the vectors', async () => {
    const p = await OnnxEmbeddingProvider.load(TINY, { batchSize: 2 });
    const vs = await p.embedTexts(['cat', 'dog', 'the dog sat', 'hello world', 'cat']);
    expect(vs).toHaveLength(5);
    expectClose(vs[2]!, expectedText('the', 'dog', 'sat'));
    expect(await p.embedTexts([])).toEqual([]);
    await p.close();
  });

  it('has a fingerprint stable across loads, naming hash, pooling, normalisation and max length', async () => {
    const [a, b, c] = await Promise.all([
      OnnxEmbeddingProvider.load(TINY),
      OnnxEmbeddingProvider.load(TINY),
      OnnxEmbeddingProvider.load(TINY, { maxLength: 64 }),
    ]);
    expect(a.fingerprint).toMatch(/^onnx:[0-9a-f]{16}:mean:true:256$/);
    expect(b.fingerprint).toBe(a.fingerprint);
    expect(c.fingerprint).toBe(a.fingerprint.replace(/:256$/, ':64'));
    await Promise.all([a.close(), b.close(), c.close()]);
  });

  it('changes the fingerprint when the model file changes', async () => {
    const dir = join(scratch, 'other-weights');
    cpSync(TINY, dir, { recursive: true });
    writeFileSync(join(dir, 'model.onnx'), encodeModel(textGraph(TINY_VOCAB.length, (i, j) => table(i, j) + 1 / 8)));
    const [a, b] = await Promise.all([OnnxEmbeddingProvider.load(TINY), OnnxEmbeddingProvider.load(dir)]);
    expect(b.fingerprint).not.toBe(a.fingerprint);
    expect(b.fingerprint.split(':').slice(2)).toEqual(a.fingerprint.split(':').slice(2));
    await Promise.all([a.close(), b.close()]);
  });

  it('honours hologram.json pooling "cls" and normalize false', async () => {
    const dir = join(scratch, 'cls');
    cpSync(TINY, dir, { recursive: true });
    writeFileSync(join(dir, 'hologram.json'), JSON.stringify({ kind: 'sentence-transformer', pooling: 'cls', normalize: false }));
    const p = await OnnxEmbeddingProvider.load(dir);
    expect(p.fingerprint).toMatch(/:cls:false:256$/);
    expectClose(
      (await p.embedTexts(['dog']))[0]!,
      Array.from({ length: 8 }, (_, j) => table(TINY_VOCAB.indexOf('[CLS]'), j)),
    );
    await p.close();
  });

  it('refuses images with MODALITY_NOT_COVERED', async () => {
    const p = await OnnxEmbeddingProvider.load(TINY);
    await expect(p.embedImages(new Uint8Array([1, 2, 3]) as never)).rejects.toMatchObject({
      code: 'MODALITY_NOT_COVERED',
      modality: 'image',
    });
    await expect(p.embedRawImages([{ width: 1, height: 1, rgb: new Uint8Array(3) }])).rejects.toMatchObject({
      code: 'MODALITY_NOT_COVERED',
    });
    expect(() => requireModality(p, 'image')).toThrow(expect.objectContaining({ code: 'MODALITY_NOT_COVERED' }));
    await p.close();
  });

  it('names the missing directory or file and what belongs there', async () => {
    const gone = join(scratch, 'no-such-model');
    expect(await codeOf(OnnxEmbeddingProvider.load(gone))).toMatchObject({
      code: 'ONNX_MODEL_DIR_MISSING',
      subject: gone,
      message: expect.stringMatching(/model\.onnx.*tokenizer\.json/),
    });

    const noModel = join(scratch, 'no-model');
    cpSync(TINY, noModel, { recursive: true });
    rmSync(join(noModel, 'model.onnx'));
    expect(await codeOf(OnnxEmbeddingProvider.load(noModel))).toMatchObject({
      code: 'ONNX_MODEL_FILE_MISSING',
      subject: join(noModel, 'model.onnx'),
    });

    const noTokenizer = join(scratch, 'no-tokenizer');
    cpSync(TINY, noTokenizer, { recursive: true });
    rmSync(join(noTokenizer, 'tokenizer.json'));
    expect(await codeOf(OnnxEmbeddingProvider.load(noTokenizer))).toMatchObject({
      code: 'ONNX_MODEL_FILE_MISSING',
      subject: join(noTokenizer, 'tokenizer.json'),
    });
  });

  it('refuses a model whose inputs are not the BERT ones', async () => {
    const dir = join(scratch, 'whisperish');
    cpSync(TINY, dir, { recursive: true });
    const graph = textGraph(TINY_VOCAB.length);
    writeFileSync(
      join(dir, 'model.onnx'),
      encodeModel({ ...graph, inputs: [...graph.inputs, { name: 'input_features', elemType: DataType.FLOAT, dims: ['batch', 80] }] }),
    );
    expect(await codeOf(OnnxEmbeddingProvider.load(dir))).toMatchObject({
      code: 'ONNX_INPUTS_UNSUPPORTED',
      message: expect.stringContaining('input_features'),
    });
  });

  it('feeds only the inputs the model declares', async () => {
    const dir = join(scratch, 'two-inputs');
    cpSync(TINY, dir, { recursive: true });
    const graph = textGraph(TINY_VOCAB.length);
    writeFileSync(join(dir, 'model.onnx'), encodeModel({ ...graph, inputs: graph.inputs.filter((i) => i.name !== 'token_type_ids') }));
    const p = await OnnxEmbeddingProvider.load(dir);
    expectClose((await p.embedTexts(['hello world']))[0]!, expectedText('hello', 'world'));
    await p.close();
  });

  it('refuses a model whose vectors are not the declared length', async () => {
    expect(await codeOf(OnnxEmbeddingProvider.load(TINY, { expectedDimensions: 384 }))).toMatchObject({
      code: 'ONNX_DIMENSION_MISMATCH',
      subject: '8',
    });
    const dir = join(scratch, 'declared');
    cpSync(TINY, dir, { recursive: true });
    writeFileSync(join(dir, 'hologram.json'), JSON.stringify({ dimensions: 512 }));
    expect(await codeOf(OnnxEmbeddingProvider.load(dir))).toMatchObject({ code: 'ONNX_DIMENSION_MISMATCH' });
  });

  it('refuses an invalid hologram.json field, naming it', async () => {
    const dir = join(scratch, 'bad-config');
    cpSync(TINY, dir, { recursive: true });
    writeFileSync(join(dir, 'hologram.json'), JSON.stringify({ pooling: 'max' }));
    expect(await codeOf(OnnxEmbeddingProvider.load(dir))).toMatchObject({ code: 'ONNX_CONFIG_INVALID', subject: 'pooling="max"' });
  });
});

describe.skipIf(!ONNX_RUNTIME_INSTALLED)('OnnxEmbeddingProvider on the tiny generated CLIP pair', () => {
  const MEAN = [0.48145466, 0.4578275, 0.40821073];
  const STD = [0.26862954, 0.26130258, 0.27577711];
  /** 4×4 image whose pixel (x, y) channel c is 10·x + 20·y + 50·c (≤ 230). */
  const pixel = (x: number, y: number, c: number) => 10 * x + 20 * y + 50 * c;
  const image = (w: number, h: number): RawRgbImage => {
    const rgb = new Uint8Array(w * h * 3);
    for (let y = 0; y < h; y++) for (let x = 0; x < w; x++) for (let c = 0; c < 3; c++) rgb[(y * w + x) * 3 + c] = pixel(x, y, c);
    return { width: w, height: h, rgb };
  };
  const expectedImage = (xs: number[], ys: number[]): number[] => {
    const means = [0, 1, 2].map((c) => {
      let s = 0;
      for (const y of ys) for (const x of xs) s += (pixel(x, y, c) / 255 - MEAN[c]!) / STD[c]!;
      return s / (xs.length * ys.length);
    });
    return normalized(Array.from({ length: TINY_DIMENSIONS }, (_, j) => means.reduce((s, m, c) => s + m * projection(c, j), 0)));
  };

  it('embeds text with the text model and raw RGB images with the vision model into one space', async () => {
    const p = await OnnxEmbeddingProvider.load(TINY_CLIP);
    expect(p.modalities).toEqual(['text', 'image']);
    expect(p.fingerprint).toMatch(/^onnx:[0-9a-f]{16}:mean:true:256$/);
    expectClose((await p.embedTexts(['我爱猫']))[0]!, expectedText('我', '爱', '猫'));
    const [square, wide] = await p.embedRawImages([image(4, 4), image(8, 4)]);
    expectClose(square!, expectedImage([0, 1, 2, 3], [0, 1, 2, 3]));
    expectClose(wide!, expectedImage([2, 3, 4, 5], [0, 1, 2, 3])); // centre crop of the 8×4 image
    expectClose((await p.embedImages([encodePpm(image(4, 4))]))[0]!, [...square!]);
    await p.close();
  });

  it('refuses encoded PNG/JPEG bytes, asking for raw RGB', async () => {
    const p = await OnnxEmbeddingProvider.load(TINY_CLIP);
    const png = Uint8Array.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
    expect(await codeOf(p.embedImages([png]))).toMatchObject({ code: 'ONNX_IMAGE_UNSUPPORTED', message: expect.stringContaining('PNG') });
    await p.close();
  });

  it("refuses a vision encoder whose vectors are not as long as the text encoder's", async () => {
    const dir = join(scratch, 'clip-4d-vision');
    cpSync(TINY_CLIP, dir, { recursive: true });
    writeFileSync(join(dir, 'vision_model.onnx'), encodeModel(visionGraph(4)));
    expect(await codeOf(OnnxEmbeddingProvider.load(dir))).toMatchObject({
      code: 'ONNX_DIMENSION_MISMATCH',
      message: expect.stringMatching(/image encoder/),
    });
  });

  it('requires vision_model.onnx in a CLIP directory', async () => {
    const dir = join(scratch, 'clip-no-vision');
    cpSync(TINY_CLIP, dir, { recursive: true });
    rmSync(join(dir, 'vision_model.onnx'));
    expect(await codeOf(OnnxEmbeddingProvider.load(dir))).toMatchObject({
      code: 'ONNX_MODEL_FILE_MISSING',
      subject: join(dir, 'vision_model.onnx'),
    });
  });
});
