/** "Did you mean": the names a mistyped one is closest to, for refusals that list them. */
import { editDistance } from '../plugins/host/manifest.ts';

/**
 * Candidates that contain `name` or are contained in it (ignoring case), or are within two
 * edits of it; nearest first, at most `max`.
 *
 * @example closestNames('shceduler', ['kernel', 'scheduler', 'plugins']) // ['scheduler']
 */
export const closestNames = (name: string, candidates: readonly string[], max = 5): string[] => {
  const wanted = name.toLowerCase();
  return candidates
    .map((candidate) => {
      const lower = candidate.toLowerCase();
      const contains = lower.includes(wanted) || wanted.includes(lower);
      return { candidate, distance: contains ? 0 : editDistance(wanted, lower) };
    })
    .filter((c) => c.distance <= 2)
    .sort((a, b) => a.distance - b.distance)
    .slice(0, max)
    .map((c) => c.candidate);
};
