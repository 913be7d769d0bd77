/** "Did you mean": how far apart two names are, and the known names a mistyped one is closest to. Pure. */

/** Levenshtein distance: the fewest single-character insertions, deletions and substitutions. */
export const editDistance = (a: string, b: string): number => {
  let row = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const next = [i];
    for (let j = 1; j <= b.length; j++) next.push(Math.min(row[j]! + 1, next[j - 1]! + 1, row[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1)));
    row = next;
  }
  return row[b.length]!;
};

/**
 * Candidates that contain `name` or are contained in it (ignoring case), or are within
 * `maxDistance` edits of it (default 2); nearest first, at most `max`.
 *
 * @example closestNames('shceduler', ['kernel', 'scheduler', 'plugins']) // ['scheduler']
 */
export const closestNames = (name: string, candidates: readonly string[], max = 5, maxDistance = 2): string[] => {
  const wanted = name.toLowerCase();
  return candidates
    .map((candidate) => {
      const lower = candidate.toLowerCase();
      const contains = lower.includes(wanted) || wanted.includes(lower);
      return { candidate, distance: contains ? 0 : editDistance(wanted, lower) };
    })
    .filter((c) => c.distance <= maxDistance)
    .sort((a, b) => a.distance - b.distance)
    .slice(0, max)
    .map((c) => c.candidate);
};
