/** The known name closest to a mistyped one, for "did you mean …?", or null when none is close. */

const editDistance = (a: string, b: string): number => {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) {
      current[j] = Math.min(previous[j]! + 1, current[j - 1]! + 1, previous[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
    }
    previous = current;
  }
  return previous[b.length]!;
};

export const closestName = (name: string, known: readonly string[]): string | null => {
  let best: { name: string; distance: number } | null = null;
  for (const candidate of known) {
    const distance = editDistance(name.toLowerCase(), candidate.toLowerCase());
    if (distance < (best?.distance ?? Infinity)) best = { name: candidate, distance };
  }
  if (!best) return null;
  return best.distance <= Math.max(2, Math.floor(best.name.length / 3)) ? best.name : null;
};
