/**
 * Taking the best hits: by score descending, then id ascending, so ties never depend on the
 * order documents came in; and weighing scored documents best first, stopping once a bound on
 * the weights says no document left can reach the k-th. Pure.
 */

export type Bm25Hit = Readonly<{ id: string; score: number }>;

/** A document's weight in a search, given its id and the tag it was added with (-1 when none). */
export type Weigh = (id: string, tag: number) => number;

/**
 * The best `k` of the `touched` slots by weighted score, weighing them from the best unweighted
 * score down (taken from a heap) and stopping when even `maxWeight` times the next score falls short of the k-th
 * weighted score found. Undefined when a weight exceeds `maxWeight` (the bound was wrong).
 */
export const weighedBestFirst = (
  touched: readonly number[],
  scores: Float64Array,
  ids: readonly (string | undefined)[],
  tags: readonly number[],
  k: number,
  weigh: Weigh,
  maxWeight: number,
  /** Hits weighed already (sorted, at most k), which the slots join. */
  weighed: readonly Bm25Hit[] = [],
): Bm25Hit[] | undefined => {
  // A max-heap of the slots by score: only what is weighed gets taken out in order, not all sorted.
  const heap = touched.slice();
  for (let i = (heap.length >> 1) - 1; i >= 0; i--) siftDown(heap, i, heap.length, scores);
  const top: Bm25Hit[] = weighed.slice();
  for (let size = heap.length; size > 0; size--) {
    const slot = heap[0]!;
    heap[0] = heap[size - 1]!;
    siftDown(heap, 0, size - 1, scores);
    const score = scores[slot]!;
    // The margin keeps a document whose bound only rounds below the k-th score: it could tie and win by id.
    if (top.length === k && score * maxWeight * (1 + BOUND_MARGIN) < top[k - 1]!.score) break;
    const id = ids[slot]!;
    const weight = weigh(id, tags[slot]!);
    if (weight > maxWeight) return undefined;
    if (weight <= 0) continue;
    insertHit(top, { id, score: score * weight }, k);
  }
  return top;
};

/** Restores the max-heap order (by `scores`) of `heap[0, size)` below `at`. */
const siftDown = (heap: number[], at: number, size: number, scores: Float64Array): void => {
  const slot = heap[at]!;
  const score = scores[slot]!;
  let i = at;
  for (;;) {
    let child = 2 * i + 1;
    if (child >= size) break;
    if (child + 1 < size && scores[heap[child + 1]!]! > scores[heap[child]!]!) child++;
    if (scores[heap[child]!]! <= score) break;
    heap[i] = heap[child]!;
    i = child;
  }
  heap[i] = slot;
};

/** Puts `hit` in its place in `top` (sorted, at most `k`), dropping the worst past k. @returns false when it would not rank. */
export const insertHit = (top: Bm25Hit[], hit: Bm25Hit, k: number): boolean => {
  if (top.length === k && byScoreThenId(hit, top[k - 1]!) >= 0) return false;
  top.splice(insertionPoint(top, hit), 0, hit);
  if (top.length > k) top.pop();
  return true;
};

/** Relative slack on the weighing bound, far above the rounding of a product of a few factors. */
export const BOUND_MARGIN = 1e-9;

/** Where `hit` goes in `sorted` (by score descending, then id) to keep it sorted. */
const insertionPoint = (sorted: readonly Bm25Hit[], hit: Bm25Hit): number => {
  let lo = 0;
  let hi = sorted.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (byScoreThenId(sorted[mid]!, hit) <= 0) lo = mid + 1;
    else hi = mid;
  }
  return lo;
};

export const byScoreThenId = (x: Bm25Hit, y: Bm25Hit): number => y.score - x.score || (x.id < y.id ? -1 : x.id > y.id ? 1 : 0);
