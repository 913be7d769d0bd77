/**
 * Entity merge detection for the merge heartbeat: pairs of entities whose names are near-duplicates
 * (character-bigram Jaccard strictly above the threshold) are proposed; the LLM decides. Pure.
 */

export type MergeCandidateEntity = Readonly<{ id: string; name: string; aliases?: readonly string[] }>;

/** A proposed merge: `a < b` (by code-unit order of ids), `similarity` in (threshold, 1]. */
export type MergeProposal = Readonly<{ a: string; b: string; similarity: number }>;

/** The spec's heuristic: propose when bigram Jaccard is `> 0.75`. */
export const MERGE_THRESHOLD = 0.75;

/** NFKC, lower case, whitespace trimmed and collapsed to single spaces. */
export const normaliseName = (name: string): string => name.normalize('NFKC').toLowerCase().replace(/\s+/gu, ' ').trim();

/** Character (code point) bigrams of a normalised name; a one-character name is its own bigram. */
export const bigramsOf = (name: string): Set<string> => {
  const chars = [...normaliseName(name)];
  if (chars.length === 1) return new Set(chars);
  const grams = new Set<string>();
  for (let i = 0; i + 1 < chars.length; i += 1) grams.add(`${chars[i]}${chars[i + 1]}`);
  return grams;
};

/**
 * |A ∩ B| / |A ∪ B| over the character bigrams of the normalised names, in [0, 1].
 * Names that normalise to the same string score 1 (two empty names included); otherwise an empty
 * bigram set scores 0.
 *
 * @example bigramJaccard('Zhang Wei', 'zhang  wei') // 1
 */
export const bigramJaccard = (a: string, b: string): number => {
  if (normaliseName(a) === normaliseName(b)) return 1;
  return jaccardOf(bigramsOf(a), bigramsOf(b));
};

const namesOf = (entity: MergeCandidateEntity): string[] =>
  [entity.name, ...(entity.aliases ?? [])].filter((name) => normaliseName(name) !== '');

/** The best score over every name/alias pair of the two entities (0 if either has no usable name). */
export const entitySimilarity = (left: MergeCandidateEntity, right: MergeCandidateEntity): number => {
  let best = 0;
  for (const x of namesOf(left)) for (const y of namesOf(right)) best = Math.max(best, bigramJaccard(x, y));
  return best;
};

/**
 * Merge proposals among `entities`: every pair with similarity strictly greater than `threshold`,
 * once each, `a < b` by id, sorted by similarity (descending), then `a`, then `b`.
 * Entries sharing an id are never paired with each other.
 *
 * Exactly the pairs a comparison of every pair finds, without comparing every pair: two names
 * whose Jaccard reaches `threshold` share a bigram among the first |A| - floor(threshold·|A|) + 1
 * of each name's bigrams taken rarest first (prefix filtering), so only names sharing such a
 * bigram are compared. The merge heartbeat runs over every entity the graph has; comparing every
 * pair made it quadratic in them.
 *
 * @example proposeMerges([{ id: 'e1', name: 'Alice Chen' }, { id: 'e2', name: 'alice chen' }])
 * // [{ a: 'e1', b: 'e2', similarity: 1 }]
 */
export const proposeMerges = (entities: readonly MergeCandidateEntity[], threshold = MERGE_THRESHOLD): MergeProposal[] => {
  const names = entities.flatMap((entity, owner) => namesOf(entity).map((name) => ({ owner, grams: bigramsOf(name) })));
  const frequency = new Map<string, number>();
  for (const { grams } of names) for (const gram of grams) frequency.set(gram, (frequency.get(gram) ?? 0) + 1);
  const rarestFirst = (x: string, y: string): number => frequency.get(x)! - frequency.get(y)! || compare(x, y);
  const byPrefixGram = new Map<string, number[]>();
  const best = new Map<string, MergeProposal>();
  for (let i = 0; i < names.length; i += 1) {
    const { owner, grams } = names[i]!;
    const ordered = [...grams].sort(rarestFirst);
    const prefix = ordered.slice(0, Math.min(ordered.length, ordered.length - Math.floor(threshold * ordered.length) + 1));
    const compared = new Set<number>();
    for (const gram of prefix) {
      for (const j of byPrefixGram.get(gram) ?? []) {
        if (compared.has(j)) continue;
        compared.add(j);
        const other = names[j]!;
        const x = entities[owner]!;
        const y = entities[other.owner]!;
        if (x.id === y.id) continue;
        const similarity = jaccardOf(grams, other.grams);
        if (!(similarity > threshold)) continue;
        const [a, b] = x.id < y.id ? [x.id, y.id] : [y.id, x.id];
        const key = `${a}\u0000${b}`;
        const previous = best.get(key);
        if (!previous || similarity > previous.similarity) best.set(key, { a, b, similarity });
      }
      const indexed = byPrefixGram.get(gram);
      if (indexed) indexed.push(i);
      else byPrefixGram.set(gram, [i]);
    }
  }
  return [...best.values()].sort((p, q) => q.similarity - p.similarity || compare(p.a, q.a) || compare(p.b, q.b));
};

/** |A ∩ B| / |A ∪ B| of two bigram sets, computed as bigramJaccard computes it. */
const jaccardOf = (left: ReadonlySet<string>, right: ReadonlySet<string>): number => {
  let shared = 0;
  for (const gram of left) if (right.has(gram)) shared += 1;
  const union = left.size + right.size - shared;
  return union === 0 ? 0 : shared / union;
};

const compare = (x: string, y: string): number => (x < y ? -1 : x > y ? 1 : 0);
