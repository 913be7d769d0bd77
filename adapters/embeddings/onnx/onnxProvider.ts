/**
 * Embeddings from a user-supplied ONNX model directory on onnxruntime-node (CPU). The
 * fingerprint is derived from the model bytes and every setting that changes the vectors, so
 * vectors from two providers are comparable exactly when their fingerprints are equal.
 */
import { createHash } from 'node:crypto';
import { stat } from 'node:fs/promises';
import { join } from 'node:path';
import { ModalityNotCovered, type EmbeddingProvider, type Modality } from '../embeddingProvider.ts';
import { clipPixelValues, decodePpm, type RawRgbImage } from './clipImage.ts';
import { NOT_READ_HERE, readRegularFile } from '../../files/privateFiles.ts';
import { readModelConfig, type ModelConfig } from './modelConfig.ts';
import { HfTokenizer } from './hfTokenizer.ts';
import { OnnxEmbeddingError } from './onnxErrors.ts';
import { loadOnnxRuntime, type OnnxRuntime, type OrtSession, type OrtSessionOptions, type OrtTensor } from './onnxRuntime.ts';
import { l2Normalize, poolOutput } from './pooling.ts';

export interface OnnxProviderOptions {
  /** Token limit per text including special tokens; default: tokenizer.json's truncation, else 256. */
  readonly maxLength?: number;
  /** Fail at load unless the model's vectors have this many components. */
  readonly expectedDimensions?: number;
  /** Texts or images per inference call; default 32. */
  readonly batchSize?: number;
}

const BERT_INPUTS = ['input_ids', 'attention_mask', 'token_type_ids'] as const;
const TEXT_OUTPUTS = ['sentence_embedding', 'text_embeds', 'last_hidden_state'];
const IMAGE_OUTPUTS = ['image_embeds', 'last_hidden_state'];

const exists = async (path: string): Promise<boolean> =>
  stat(path).then(
    () => true,
    () => false,
  );

const isDirectory = async (path: string): Promise<boolean> =>
  stat(path).then(
    (found) => found.isDirectory(),
    () => false,
  );

const missing = (path: string, what: string): OnnxEmbeddingError =>
  new OnnxEmbeddingError('ONNX_MODEL_FILE_MISSING', `model file '${path}' does not exist; it should hold ${what}`, path);

/** The bytes of a file of the model directory: only a regular file (or a link to one) is read, so a FIFO or a device never hangs or floods the start. */
const modelFile = (path: string, what: string): Buffer => {
  let read: Buffer | string | undefined;
  try {
    read = readRegularFile(path, { followLinks: true });
  } catch (e) {
    throw new OnnxEmbeddingError(
      'ONNX_MODEL_FILE_INVALID',
      `cannot read '${path}' (${(e as Error).message}); it should hold ${what}`,
      path,
      {
        cause: e,
      },
    );
  }
  if (read === undefined) throw missing(path, what);
  if (typeof read === 'string') {
    throw new OnnxEmbeddingError(
      'ONNX_MODEL_FILE_INVALID',
      `'${path}' is not a regular file (${NOT_READ_HERE}); it should hold ${what}`,
      path,
    );
  }
  return read;
};

const pickOutput = (session: OrtSession, preferred: readonly string[]): string =>
  preferred.find((name) => session.outputNames.includes(name)) ?? session.outputNames[0]!;

const chunks = <T>(items: readonly T[], size: number): T[][] =>
  Array.from({ length: Math.ceil(items.length / size) }, (_, i) => items.slice(i * size, (i + 1) * size));

export class OnnxEmbeddingProvider implements EmbeddingProvider {
  readonly modalities: readonly Modality[];
  private dims = 0;

  private constructor(
    private readonly ort: OnnxRuntime,
    readonly fingerprint: string,
    readonly config: ModelConfig,
    private readonly tokenizer: HfTokenizer,
    private readonly text: OrtSession,
    private readonly vision: OrtSession | null,
    private readonly batchSize: number,
  ) {
    this.modalities = vision ? ['text', 'image'] : ['text'];
  }

  get dimensions(): number {
    return this.dims;
  }

  /**
   * Load `dir/model.onnx` + `dir/tokenizer.json` (+ optional `dir/hologram.json`). A CLIP
   * directory holds `text_model.onnx` (or `model.onnx`) and `vision_model.onnx`.
   *
   * @example const p = await OnnxEmbeddingProvider.load('/models/bge-small-zh', { maxLength: 256 })
   */
  static async load(dir: string, options: OnnxProviderOptions = {}): Promise<OnnxEmbeddingProvider> {
    if (!(await isDirectory(dir))) {
      throw new OnnxEmbeddingError(
        'ONNX_MODEL_DIR_MISSING',
        `model directory '${dir}' does not exist or is not a directory; it should hold model.onnx (the exported encoder), ` +
          `tokenizer.json (Hugging Face tokenizers format) and optionally hologram.json`,
        dir,
      );
    }
    const config = await readModelConfig(dir);
    let textPath = join(dir, 'model.onnx');
    if (config.kind === 'clip' && (await exists(join(dir, 'text_model.onnx')))) textPath = join(dir, 'text_model.onnx');
    const textModel = modelFile(textPath, 'the ONNX text encoder (inputs input_ids, attention_mask, token_type_ids)');
    const visionPath = join(dir, 'vision_model.onnx');
    const visionModel =
      config.kind === 'clip' ? modelFile(visionPath, 'the ONNX CLIP image encoder (input pixel_values [batch, 3, H, W])') : null;
    const tokenizerPath = join(dir, 'tokenizer.json');
    const tokenizerBytes = modelFile(tokenizerPath, "the model's Hugging Face tokenizer (tokenizers library JSON)");

    let tokenizerJson: unknown;
    try {
      tokenizerJson = JSON.parse(tokenizerBytes.toString('utf8'));
    } catch (e) {
      throw new OnnxEmbeddingError('ONNX_CONFIG_INVALID', `cannot read '${tokenizerPath}' as JSON`, tokenizerPath, { cause: e });
    }
    const tokenizer = HfTokenizer.fromJson(tokenizerJson, options.maxLength === undefined ? {} : { maxLength: options.maxLength });

    const hash = createHash('sha256').update(textModel);
    if (visionModel) hash.update(visionModel);
    // The tokenizer decides the ids the model sees: another vocabulary is another space.
    hash.update(tokenizerBytes);
    const fingerprint = `onnx:${hash.digest('hex').slice(0, 16)}:${config.pooling}:${config.normalize}:${tokenizer.maxLength}`;

    const ort = await loadOnnxRuntime();
    const sessionOptions: OrtSessionOptions = { executionProviders: ['cpu'], graphOptimizationLevel: 'all' };
    const text = await ort.InferenceSession.create(textPath, sessionOptions);
    const unknown = text.inputNames.filter((n) => !(BERT_INPUTS as readonly string[]).includes(n));
    if (!text.inputNames.includes('input_ids') || unknown.length > 0) {
      await text.release();
      throw new OnnxEmbeddingError(
        'ONNX_INPUTS_UNSUPPORTED',
        `'${textPath}' declares inputs [${text.inputNames.join(', ')}]; expected input_ids and optionally ` +
          `attention_mask, token_type_ids (a BERT-style encoder export)`,
        text.inputNames.join(','),
      );
    }
    const vision = config.kind === 'clip' ? await ort.InferenceSession.create(visionPath, sessionOptions) : null;
    if (vision && !vision.inputNames.includes('pixel_values')) {
      await Promise.all([text.release(), vision.release()]);
      throw new OnnxEmbeddingError(
        'ONNX_INPUTS_UNSUPPORTED',
        `'${visionPath}' declares inputs [${vision.inputNames.join(', ')}]; expected pixel_values`,
        vision.inputNames.join(','),
      );
    }

    const provider = new OnnxEmbeddingProvider(ort, fingerprint, config, tokenizer, text, vision, options.batchSize ?? 32);
    try {
      await provider.probe(options.expectedDimensions ?? config.dimensions);
    } catch (e) {
      await provider.close();
      throw e;
    }
    return provider;
  }

  async embedTexts(texts: readonly string[]): Promise<Float32Array[]> {
    const out: Float32Array[] = [];
    for (const batch of chunks(texts, this.batchSize)) out.push(...(await this.runText(batch)));
    return out;
  }

  /**
   * Images as binary PPM (P6) bytes, i.e. raw RGB with a header; encoded JPEG/PNG is refused
   * with ONNX_IMAGE_UNSUPPORTED (decode it first, or call `embedRawImages`).
   */
  async embedImages(images: readonly Uint8Array[]): Promise<Float32Array[]> {
    if (!this.vision) throw new ModalityNotCovered(this.fingerprint, 'image');
    return this.embedRawImages(images.map(decodePpm));
  }

  /** Images as `{ width, height, rgb }`, resized and centre-cropped to `imageSize`. */
  async embedRawImages(images: readonly RawRgbImage[]): Promise<Float32Array[]> {
    if (!this.vision) throw new ModalityNotCovered(this.fingerprint, 'image');
    const out: Float32Array[] = [];
    for (const batch of chunks(images, this.batchSize)) out.push(...(await this.runVision(batch)));
    return out;
  }

  async close(): Promise<void> {
    await this.text.release();
    await this.vision?.release();
  }

  private async runText(texts: readonly string[]): Promise<Float32Array[]> {
    if (texts.length === 0) return [];
    const enc = this.tokenizer.encodeBatch(texts);
    const shape = [enc.batchSize, enc.sequenceLength];
    const all = { input_ids: enc.inputIds, attention_mask: enc.attentionMask, token_type_ids: enc.tokenTypeIds };
    const feeds: Record<string, OrtTensor> = {};
    for (const name of this.text.inputNames) feeds[name] = new this.ort.Tensor('int64', all[name as keyof typeof all], shape);
    const name = pickOutput(this.text, TEXT_OUTPUTS);
    const result = (await this.text.run(feeds, [name]))[name]!;
    return this.finish(poolOutput(result.data as Float32Array, result.dims, enc.attentionMask, this.config.pooling, name));
  }

  private async runVision(images: readonly RawRgbImage[]): Promise<Float32Array[]> {
    const vision = this.vision!;
    const size = this.config.imageSize;
    const plane = 3 * size * size;
    const pixels = new Float32Array(images.length * plane);
    for (const [i, img] of images.entries()) pixels.set(clipPixelValues(img, size, this.config.imageMean, this.config.imageStd), i * plane);
    const name = pickOutput(vision, IMAGE_OUTPUTS);
    const result = (await vision.run({ pixel_values: new this.ort.Tensor('float32', pixels, [images.length, 3, size, size]) }, [name]))[
      name
    ]!;
    return this.finish(poolOutput(result.data as Float32Array, result.dims, null, 'cls', name));
  }

  private finish(vectors: Float32Array[]): Float32Array[] {
    for (const v of vectors) {
      if (this.dims !== 0 && v.length !== this.dims) {
        throw new OnnxEmbeddingError(
          'ONNX_DIMENSION_MISMATCH',
          `model produced a ${v.length}-d vector in a ${this.dims}-d space (${this.fingerprint})`,
          String(v.length),
        );
      }
    }
    return this.config.normalize ? vectors.map(l2Normalize) : vectors;
  }

  /** Learn the dimension from one text (and one image for CLIP) and check it against what was declared. */
  private async probe(expected: number | undefined): Promise<void> {
    const [textVector] = await this.runText(['probe']);
    this.dims = textVector!.length;
    if (this.vision) {
      const size = this.config.imageSize;
      await this.runVision([{ width: size, height: size, rgb: new Uint8Array(size * size * 3).fill(128) }]).catch((e: unknown) => {
        if (e instanceof OnnxEmbeddingError && e.code === 'ONNX_DIMENSION_MISMATCH') {
          throw new OnnxEmbeddingError(
            'ONNX_DIMENSION_MISMATCH',
            `the image encoder's vectors are not ${this.dims}-d like the text encoder's; both must project into one space`,
            e.subject,
            { cause: e },
          );
        }
        throw e;
      });
    }
    if (expected !== undefined && expected !== this.dims) {
      throw new OnnxEmbeddingError(
        'ONNX_DIMENSION_MISMATCH',
        `model produces ${this.dims}-d vectors but ${expected} were expected (hologram.json "dimensions" or options.expectedDimensions)`,
        String(this.dims),
      );
    }
  }
}
