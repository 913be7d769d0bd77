/**
 * onnxruntime-node, loaded only when a model is: it is an optional package (≈ 290 MB) that
 * `npm install` leaves out. The types are the slice of its API the provider uses, so the code
 * type-checks whether or not the package is installed.
 */
import { OnnxEmbeddingError } from './onnxErrors.ts';

export interface OrtTensor {
  readonly data: unknown;
  readonly dims: readonly number[];
}

export interface OrtSession {
  readonly inputNames: readonly string[];
  readonly outputNames: readonly string[];
  run(feeds: Record<string, OrtTensor>, fetches: readonly string[]): Promise<Record<string, OrtTensor>>;
  release(): Promise<void>;
}

export type OrtSessionOptions = Readonly<{ executionProviders: readonly string[]; graphOptimizationLevel: 'all' }>;

export interface OnnxRuntime {
  readonly InferenceSession: { create(path: string, options: OrtSessionOptions): Promise<OrtSession> };
  readonly Tensor: new (type: 'int64' | 'float32', data: BigInt64Array | Float32Array, dims: readonly number[]) => OrtTensor;
}

export const ONNX_RUNTIME_PACKAGE = 'onnxruntime-node';

let loaded: Promise<OnnxRuntime> | undefined;

export const loadOnnxRuntime = (): Promise<OnnxRuntime> => {
  loaded ??= import(ONNX_RUNTIME_PACKAGE).then(
    (module: { default?: OnnxRuntime } & OnnxRuntime) => module.default ?? module,
    (error: unknown) => {
      loaded = undefined;
      throw new OnnxEmbeddingError(
        'ONNX_RUNTIME_MISSING',
        `dense recall needs the optional package ${ONNX_RUNTIME_PACKAGE}, which is not installed: run ` +
          '`npm run install:onnx` in the checkout, or remove memory.embedding.onnxDir from settings.json',
        ONNX_RUNTIME_PACKAGE,
        { cause: error },
      );
    },
  );
  return loaded;
};
