/**
 * CLIP image preprocessing over raw RGB, with no image-decoding dependency: the caller decodes
 * JPEG/PNG (or passes binary PPM `P6` bytes, which are raw RGB with a short header). Pure.
 */
import { OnnxEmbeddingError } from './onnxErrors.ts';

/** Raw 8-bit RGB pixels, row-major, `rgb.length === width * height * 3`. */
export interface RawRgbImage {
  readonly width: number;
  readonly height: number;
  readonly rgb: Uint8Array;
}

/** OpenAI CLIP's normalisation constants, also used by Chinese-CLIP. */
export const CLIP_MEAN = [0.48145466, 0.4578275, 0.40821073] as const;
export const CLIP_STD = [0.26862954, 0.26130258, 0.27577711] as const;

const unsupported = (why: string): OnnxEmbeddingError =>
  new OnnxEmbeddingError(
    'ONNX_IMAGE_UNSUPPORTED',
    `image is not raw RGB (${why}); decode JPEG/PNG to RGB first and pass { width, height, rgb } or binary PPM (P6, maxval 255) bytes`,
    why,
  );

export const checkRaw = (image: RawRgbImage): RawRgbImage => {
  const { width, height, rgb } = image;
  if (!Number.isInteger(width) || !Number.isInteger(height) || width <= 0 || height <= 0 || rgb.length !== width * height * 3) {
    throw unsupported(`${width}×${height} with ${rgb.length} bytes, expected ${width * height * 3}`);
  }
  return image;
};

/** Decode binary PPM (`P6 <w> <h> 255` then RGB bytes); the only byte format accepted. */
export const decodePpm = (bytes: Uint8Array): RawRgbImage => {
  const head = new TextDecoder('latin1').decode(bytes.subarray(0, Math.min(bytes.length, 64)));
  const m = /^P6\s+(?:#[^\n]*\n\s*)*(\d+)\s+(\d+)\s+(\d+)\s/.exec(head);
  if (!m) {
    const magic = bytes[0] === 0x89 && bytes[1] === 0x50 ? 'PNG' : bytes[0] === 0xff && bytes[1] === 0xd8 ? 'JPEG' : 'unknown bytes';
    throw unsupported(`got ${magic}`);
  }
  if (m[3] !== '255') throw unsupported(`PPM maxval ${m[3]}, expected 255`);
  return checkRaw({ width: Number(m[1]), height: Number(m[2]), rgb: bytes.subarray(m[0].length) });
};

/** Encode raw RGB as binary PPM, so it can pass through `embedImages(Uint8Array[])`. */
export const encodePpm = (image: RawRgbImage): Uint8Array => {
  const header = new TextEncoder().encode(`P6\n${image.width} ${image.height}\n255\n`);
  const out = new Uint8Array(header.length + image.rgb.length);
  out.set(header);
  out.set(image.rgb, header.length);
  return out;
};

/**
 * Resize the shorter side to `size` (bilinear, half-pixel centres; CLIP uses bicubic, so vectors
 * differ slightly from the Python pipeline), centre-crop `size`×`size`, scale to [0, 1] and
 * normalise per channel. Returns CHW float32 of length 3·size·size.
 */
export const clipPixelValues = (
  image: RawRgbImage,
  size: number,
  mean: readonly number[] = CLIP_MEAN,
  std: readonly number[] = CLIP_STD,
): Float32Array => {
  const { width, height, rgb } = checkRaw(image);
  const scale = size / Math.min(width, height);
  const rw = Math.max(size, Math.round(width * scale));
  const rh = Math.max(size, Math.round(height * scale));
  const left = Math.floor((rw - size) / 2);
  const top = Math.floor((rh - size) / 2);
  const out = new Float32Array(3 * size * size);
  const at = (x: number, y: number, c: number): number => rgb[(y * width + x) * 3 + c]!;
  for (let y = 0; y < size; y++) {
    const sy = Math.min(height - 1, Math.max(0, ((y + top + 0.5) * height) / rh - 0.5));
    const y0 = Math.floor(sy);
    const y1 = Math.min(height - 1, y0 + 1);
    const fy = sy - y0;
    for (let x = 0; x < size; x++) {
      const sx = Math.min(width - 1, Math.max(0, ((x + left + 0.5) * width) / rw - 0.5));
      const x0 = Math.floor(sx);
      const x1 = Math.min(width - 1, x0 + 1);
      const fx = sx - x0;
      for (let c = 0; c < 3; c++) {
        const v = (at(x0, y0, c) * (1 - fx) + at(x1, y0, c) * fx) * (1 - fy) + (at(x0, y1, c) * (1 - fx) + at(x1, y1, c) * fx) * fy;
        out[c * size * size + y * size + x] = (v / 255 - mean[c]!) / std[c]!;
      }
    }
  }
  return out;
};
