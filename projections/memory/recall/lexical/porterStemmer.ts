/**
 * The Porter stemmer exactly as published in 1980 (M.F. Porter, "An algorithm for suffix
 * stripping", Program 14(3)): steps 1a–5b, longest-suffix-wins within a step, and a rule whose
 * suffix matches but whose condition fails ends its step. Pure; lowercase a–z words only.
 * Words of one or two letters are returned unchanged, as in Porter's reference implementation.
 */

type Rule = readonly [suffix: string, replacement: string];

const isConsonant = (w: string, i: number): boolean => {
  const c = w[i];
  if (c === 'a' || c === 'e' || c === 'i' || c === 'o' || c === 'u') return false;
  if (c === 'y') return i === 0 || !isConsonant(w, i - 1);
  return true;
};

/** m in [C](VC)^m[V]: the number of vowel-run → consonant-run transitions. */
export const measure = (stem: string): number => {
  let m = 0;
  let i = 0;
  const n = stem.length;
  while (i < n && isConsonant(stem, i)) i++;
  while (i < n) {
    while (i < n && !isConsonant(stem, i)) i++;
    if (i >= n) break;
    while (i < n && isConsonant(stem, i)) i++;
    m++;
  }
  return m;
};

const containsVowel = (stem: string): boolean => {
  for (let i = 0; i < stem.length; i++) if (!isConsonant(stem, i)) return true;
  return false;
};

/** *d: ends with a double consonant. */
const endsDoubleConsonant = (w: string): boolean => {
  const n = w.length;
  return n >= 2 && w[n - 1] === w[n - 2] && isConsonant(w, n - 1);
};

/** *o: ends consonant-vowel-consonant, the last not w, x or y. */
const endsCvc = (w: string): boolean => {
  const n = w.length;
  if (n < 3) return false;
  const last = w[n - 1];
  return isConsonant(w, n - 3) && !isConsonant(w, n - 2) && isConsonant(w, n - 1) && last !== 'w' && last !== 'x' && last !== 'y';
};

/** Applies the longest matching rule if the stem before it has measure > `minMeasure`. */
const applyRules = (w: string, rules: readonly Rule[], minMeasure: number): string => {
  for (const [suffix, replacement] of rules) {
    if (!w.endsWith(suffix)) continue;
    const stem = w.slice(0, w.length - suffix.length);
    return measure(stem) > minMeasure ? stem + replacement : w;
  }
  return w;
};

const byLengthDesc = (rules: readonly Rule[]): readonly Rule[] => [...rules].sort((a, b) => b[0].length - a[0].length);

const STEP2: readonly Rule[] = byLengthDesc([
  ['ational', 'ate'],
  ['tional', 'tion'],
  ['enci', 'ence'],
  ['anci', 'ance'],
  ['izer', 'ize'],
  ['abli', 'able'],
  ['alli', 'al'],
  ['entli', 'ent'],
  ['eli', 'e'],
  ['ousli', 'ous'],
  ['ization', 'ize'],
  ['ation', 'ate'],
  ['ator', 'ate'],
  ['alism', 'al'],
  ['iveness', 'ive'],
  ['fulness', 'ful'],
  ['ousness', 'ous'],
  ['aliti', 'al'],
  ['iviti', 'ive'],
  ['biliti', 'ble'],
]);

const STEP3: readonly Rule[] = byLengthDesc([
  ['icate', 'ic'],
  ['ative', ''],
  ['alize', 'al'],
  ['iciti', 'ic'],
  ['ical', 'ic'],
  ['ful', ''],
  ['ness', ''],
]);

const STEP4_SUFFIXES: readonly string[] = [
  'al',
  'ance',
  'ence',
  'er',
  'ic',
  'able',
  'ible',
  'ant',
  'ement',
  'ment',
  'ent',
  'ion',
  'ou',
  'ism',
  'ate',
  'iti',
  'ous',
  'ive',
  'ize',
].sort((a, b) => b.length - a.length);

const step1a = (w: string): string => {
  if (w.endsWith('sses')) return w.slice(0, -2);
  if (w.endsWith('ies')) return w.slice(0, -2);
  if (w.endsWith('ss')) return w;
  if (w.endsWith('s')) return w.slice(0, -1);
  return w;
};

const step1b = (w: string): string => {
  if (w.endsWith('eed')) return measure(w.slice(0, -3)) > 0 ? w.slice(0, -1) : w;
  let stem: string;
  if (w.endsWith('ed') && containsVowel(w.slice(0, -2))) stem = w.slice(0, -2);
  else if (w.endsWith('ing') && containsVowel(w.slice(0, -3))) stem = w.slice(0, -3);
  else return w;
  if (stem.endsWith('at') || stem.endsWith('bl') || stem.endsWith('iz')) return `${stem}e`;
  if (endsDoubleConsonant(stem) && !/[lsz]$/.test(stem)) return stem.slice(0, -1);
  if (measure(stem) === 1 && endsCvc(stem)) return `${stem}e`;
  return stem;
};

const step1c = (w: string): string => (w.endsWith('y') && containsVowel(w.slice(0, -1)) ? `${w.slice(0, -1)}i` : w);

const step4 = (w: string): string => {
  for (const suffix of STEP4_SUFFIXES) {
    if (!w.endsWith(suffix)) continue;
    const stem = w.slice(0, w.length - suffix.length);
    if (suffix === 'ion' && !(stem.endsWith('s') || stem.endsWith('t'))) continue;
    return measure(stem) > 1 ? stem : w;
  }
  return w;
};

const step5a = (w: string): string => {
  if (!w.endsWith('e')) return w;
  const stem = w.slice(0, -1);
  const m = measure(stem);
  return m > 1 || (m === 1 && !endsCvc(stem)) ? stem : w;
};

const step5b = (w: string): string => (measure(w) > 1 && endsDoubleConsonant(w) && w.endsWith('l') ? w.slice(0, -1) : w);

/**
 * Stems one lowercase English word.
 *
 * @example porterStem('generalization') // 'gener'
 */
export const porterStem = (word: string): string => {
  if (word.length <= 2) return word;
  let w = step1a(word);
  w = step1b(w);
  w = step1c(w);
  w = applyRules(w, STEP2, 0);
  w = applyRules(w, STEP3, 0);
  w = step4(w);
  w = step5a(w);
  return step5b(w);
};
