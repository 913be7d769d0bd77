/** Typed errors of the ONNX embedding provider: each names the offending path, type or value and what to do. */
import { HologramError } from '../../../events/index.ts';

export type OnnxEmbeddingErrorCode =
  | 'ONNX_RUNTIME_MISSING' // the optional onnxruntime-node package is not installed
  | 'ONNX_MODEL_DIR_MISSING' // the model directory does not exist
  | 'ONNX_MODEL_FILE_MISSING' // a file the directory must hold is absent
  | 'ONNX_MODEL_FILE_INVALID' // a file the directory must hold is not a regular file, or cannot be read
  | 'ONNX_CONFIG_INVALID' // hologram.json or tokenizer.json is not valid JSON or has a bad field
  | 'ONNX_TOKENIZER_UNSUPPORTED' // tokenizer.json uses a model/normalizer/pre-tokenizer/post-processor type we do not implement
  | 'ONNX_INPUTS_UNSUPPORTED' // the model declares inputs other than the BERT ones
  | 'ONNX_OUTPUT_UNSUPPORTED' // the chosen output has a shape we cannot turn into one vector per input
  | 'ONNX_DIMENSION_MISMATCH' // the vectors are not as long as declared or expected
  | 'ONNX_IMAGE_UNSUPPORTED'; // an image is not raw RGB (PPM P6 bytes or { width, height, rgb })

export class OnnxEmbeddingError extends HologramError {
  constructor(
    readonly code: OnnxEmbeddingErrorCode,
    message: string,
    /** The path, type name or value at fault, where it is safe to show. */
    readonly subject?: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

export const isOnnxEmbeddingError = (e: unknown): e is OnnxEmbeddingError => e instanceof OnnxEmbeddingError;

/** Thrown when tokenizer.json asks for a component type this loader does not implement. */
export class UnsupportedTokenizer extends OnnxEmbeddingError {
  constructor(
    readonly component: 'model' | 'normalizer' | 'pre_tokenizer' | 'post_processor',
    readonly found: string,
    readonly supported: readonly string[],
  ) {
    super(
      'ONNX_TOKENIZER_UNSUPPORTED',
      `tokenizer.json ${component} type '${found}' is not supported; supported: ${supported.join(', ')} ` +
        `(export a BERT-style WordPiece tokenizer, or use a model whose tokenizer is one of these)`,
      found,
    );
  }
}
