/**
 * Lexical tokenizer for mixed Chinese/English text. Deterministic: the same text always gives
 * the same tokens, so `TOKENIZER_VERSION` must change whenever the output for some text would.
 * Pure: the word segmenter for Chinese is given (jieba, from adapters/).
 *
 * - Chinese (Han) runs are segmented by the segmenter (jieba in search mode with HMM on: each
 *   word, plus the dictionary words inside a long word (吃火锅 → 火锅, 吃火锅), so a query for a
 *   part finds the whole). Chinese stop words are dropped.
 * - Other letter/digit runs are lowercased; English stop words are dropped, irregular forms
 *   become their base form (bought → buy, children → child) and a–z words are Porter-stemmed.
 *   Numbers and mixed tokens (gpt4) are kept as they are.
 * - Everything else (spaces, punctuation, symbols) separates tokens.
 */
import { CHINESE_STOP_WORDS } from './chineseStopWords.ts';
import { ENGLISH_STOP_WORDS } from './englishStopWords.ts';
import { ENGLISH_IRREGULAR_BASE } from './englishIrregulars.ts';
import { porterStem } from './porterStemmer.ts';

/** Bump when tokenize() would return something different for any input. */
export const TOKENIZER_VERSION = 'tok2-jieba2search-irregular1-porter1980';

/**
 * A Han run, or a run of other letters/marks/digits, matched at most RUN_PIECE code points at a
 * time: an unbounded `+` backtracks through V8's regexp stack, which overflows ("Maximum call
 * stack size exceeded") on a run of a few million characters. Pieces that touch are joined
 * again, so the runs are exactly those of the unbounded pattern.
 */
const RUN_PIECE = 4096;
const RUN = new RegExp(`(\\p{Script=Han}{1,${RUN_PIECE}})|((?:(?!\\p{Script=Han})[\\p{L}\\p{M}\\p{N}]){1,${RUN_PIECE}})`, 'gu');
const ASCII_WORD = /^[a-z]+$/;

/** Splits a run of Han characters into words. */
export type HanSegmenter = (run: string) => readonly string[];

/** Splits text into index terms. */
export type Tokenizer = (text: string) => string[];

const pushLatin = (run: string, out: string[]): void => {
  const word = run.toLowerCase();
  if (ENGLISH_STOP_WORDS.has(word)) return;
  if (!ASCII_WORD.test(word)) out.push(word);
  else out.push(porterStem(ENGLISH_IRREGULAR_BASE.get(word) ?? word));
};

/** The maximal runs of `text` in order: `[true, run]` for Han, `[false, run]` for other letters and digits. */
export function* runsOf(text: string): Generator<[boolean, string]> {
  let han = false;
  let start = -1;
  let end = -1;
  for (const match of text.matchAll(RUN)) {
    const isHan = match[1] !== undefined;
    if (match.index === end && isHan === han) {
      end += match[0].length; // the same run, continued past a piece
      continue;
    }
    if (start !== -1) yield [han, text.slice(start, end)];
    han = isHan;
    start = match.index;
    end = start + match[0].length;
  }
  if (start !== -1) yield [han, text.slice(start, end)];
}

/**
 * The tokenizer over a Chinese segmenter.
 *
 * @example createTokenizer(jieba)('The runners were running quickly') // ['runner', 'run', 'quickli']
 * @example createTokenizer(jieba)('我住在北京') // ['住', '北京']
 */
export const createTokenizer = (segmentHan: HanSegmenter): Tokenizer => {
  const pushChinese = (run: string, out: string[]): void => {
    for (const word of segmentHan(run)) {
      if (!CHINESE_STOP_WORDS.has(word)) out.push(word);
    }
  };
  return (text) => {
    const out: string[] = [];
    for (const [han, run] of runsOf(text.normalize('NFKC'))) {
      if (han) pushChinese(run, out);
      else pushLatin(run, out);
    }
    return out;
  };
};
