/**
 * Public surface of the ONNX embedding provider: a user-supplied model directory (model.onnx +
 * tokenizer.json, optional hologram.json) run on onnxruntime-node, its WordPiece tokenizer,
 * CLIP image preprocessing over raw RGB, and the typed errors.
 */
export { OnnxEmbeddingProvider, type OnnxProviderOptions } from './onnxProvider.ts';
export { HfTokenizer, DEFAULT_MAX_LENGTH, type EncodedBatch } from './hfTokenizer.ts';
export { parseModelConfig, readModelConfig, DEFAULT_CONFIG, type ModelConfig } from './modelConfig.ts';
export { clipPixelValues, decodePpm, encodePpm, CLIP_MEAN, CLIP_STD, type RawRgbImage } from './clipImage.ts';
export { poolOutput, l2Normalize, type Pooling } from './pooling.ts';
export { OnnxEmbeddingError, UnsupportedTokenizer, isOnnxEmbeddingError, type OnnxEmbeddingErrorCode } from './onnxErrors.ts';
