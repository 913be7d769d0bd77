/**
 * A BM25 document as counts: how many times each term occurs in it, the order-free digest the
 * index checks a removal's counts against, and the error it refuses other counts with. Pure.
 */
import { HologramError } from '../../../events/errors.ts';

/** A document as how many times each term occurs in it (each count ≥ 1). */
export type Bm25Counts = ReadonlyMap<string, number>;

/** How many times each token occurs. */
export const countsOf = (tokens: readonly string[]): Map<string, number> => {
  const counts = new Map<string, number>();
  for (const t of tokens) counts.set(t, (counts.get(t) ?? 0) + 1);
  return counts;
};

/** A document removed with counts other than those it was added with: the index would be wrong after it. */
export class Bm25CountsMismatch extends HologramError {
  readonly code = 'BM25_COUNTS_MISMATCH';
}

/** A digest of counts that does not depend on their order (32-bit FNV-1a of each term and count, summed). */
export const digestOf = (counts: Bm25Counts): number => {
  let digest = 0;
  for (const [term, count] of counts) {
    let h = 0x811c9dc5;
    for (let i = 0; i < term.length; i++) h = Math.imul(h ^ term.charCodeAt(i), 0x01000193);
    h = Math.imul(h ^ count, 0x01000193);
    digest = (digest + h) | 0;
  }
  return digest;
};
