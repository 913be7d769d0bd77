/**
 * Fixed, seeded, non-cryptographic string hashing for feature hashing and fingerprints.
 * Pure and stable across platforms and releases: changing it changes every lexical vector,
 * so any change here must bump the lexical provider's version.
 */

/** FNV-1a over UTF-16 code units, 32-bit, with the offset basis xor'ed by `seed`. */
export const fnv1a32 = (text: string, seed = 0): number => {
  let h = (0x811c9dc5 ^ seed) >>> 0;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
};

/** MurmurHash3's finaliser: spreads FNV's weak low bits over the whole word. */
export const mix32 = (h: number): number => {
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
};

/** Bucket in [0, dimensions) and a ±1 sign for one token. */
export const hashFeature = (token: string, dimensions: number, seed: number): { bucket: number; sign: 1 | -1 } => {
  const h = mix32(fnv1a32(token, seed));
  return { bucket: h % dimensions, sign: h >>> 31 === 0 ? 1 : -1 };
};

/** A 64-bit hex digest (two seeded FNV-1a passes), for fingerprints. */
export const hash64Hex = (text: string): string =>
  mix32(fnv1a32(text, 0)).toString(16).padStart(8, '0') + mix32(fnv1a32(text, 0x9e3779b9)).toString(16).padStart(8, '0');
