/** `hologram.json` beside a model: what kind of encoder it is and how to pool. Missing file = defaults. */
import { readPlacedFile } from '../../files/privateFiles.ts';
import { join } from 'node:path';
import { CLIP_MEAN, CLIP_STD } from './clipImage.ts';
import { OnnxEmbeddingError } from './onnxErrors.ts';
import type { Pooling } from './pooling.ts';

export interface ModelConfig {
  readonly kind: 'sentence-transformer' | 'clip';
  readonly pooling: Pooling;
  readonly normalize: boolean;
  /** Square input side of a CLIP image encoder. */
  readonly imageSize: number;
  readonly imageMean: readonly number[];
  readonly imageStd: readonly number[];
  /** Declared vector length, checked at load when present. */
  readonly dimensions?: number;
}

export const DEFAULT_CONFIG: ModelConfig = {
  kind: 'sentence-transformer',
  pooling: 'mean',
  normalize: true,
  imageSize: 224,
  imageMean: CLIP_MEAN,
  imageStd: CLIP_STD,
};

const invalid = (path: string, field: string, value: unknown, allowed: string): OnnxEmbeddingError =>
  new OnnxEmbeddingError(
    'ONNX_CONFIG_INVALID',
    `${path}: "${field}" is ${JSON.stringify(value)}; expected ${allowed}`,
    `${field}=${JSON.stringify(value)}`,
  );

export const parseModelConfig = (raw: unknown, path: string): ModelConfig => {
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) throw invalid(path, '(top level)', raw, 'an object');
  const o = raw as Record<string, unknown>;
  const pick = <T>(field: string, ok: (v: unknown) => v is T, allowed: string, fallback: T): T => {
    if (o[field] === undefined) return fallback;
    if (!ok(o[field])) throw invalid(path, field, o[field], allowed);
    return o[field];
  };
  const oneOf =
    <T extends string>(values: readonly T[]) =>
    (v: unknown): v is T =>
      values.includes(v as T);
  const triple = (v: unknown): v is number[] => Array.isArray(v) && v.length === 3 && v.every((x) => typeof x === 'number');
  const positiveInt = (v: unknown): v is number => Number.isInteger(v) && (v as number) > 0;
  const dimensions = pick('dimensions', positiveInt, 'a positive integer', undefined as number | undefined);
  return {
    kind: pick('kind', oneOf(['sentence-transformer', 'clip'] as const), '"sentence-transformer" or "clip"', DEFAULT_CONFIG.kind),
    pooling: pick('pooling', oneOf(['mean', 'cls'] as const), '"mean" or "cls"', DEFAULT_CONFIG.pooling),
    normalize: pick('normalize', (v): v is boolean => typeof v === 'boolean', 'true or false', DEFAULT_CONFIG.normalize),
    imageSize: pick('imageSize', positiveInt, 'a positive integer', DEFAULT_CONFIG.imageSize),
    imageMean: pick('imageMean', triple, 'three numbers', DEFAULT_CONFIG.imageMean),
    imageStd: pick('imageStd', triple, 'three numbers', DEFAULT_CONFIG.imageStd),
    ...(dimensions === undefined ? {} : { dimensions }),
  };
};

export const readModelConfig = async (dir: string): Promise<ModelConfig> => {
  const path = join(dir, 'hologram.json');
  const read = readPlacedFile(path, (why) => new OnnxEmbeddingError('ONNX_CONFIG_INVALID', `${why}; remove it or make it JSON`, path));
  if (read === undefined) return DEFAULT_CONFIG;
  const text = read.toString('utf8');
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (e) {
    throw new OnnxEmbeddingError('ONNX_CONFIG_INVALID', `${path} is not valid JSON`, path, { cause: e });
  }
  return parseModelConfig(raw, path);
};
