/**
 * BERT text normalisation and pre-tokenisation as the `tokenizers` library does it
 * (BertNormalizer, BertPreTokenizer). Pure string functions.
 */

export interface BertNormalizerOptions {
  readonly cleanText: boolean;
  readonly handleChineseChars: boolean;
  /** `null` in tokenizer.json means "follow lowercase". */
  readonly stripAccents: boolean;
  readonly lowercase: boolean;
}

/** The CJK Unified Ideograph blocks BERT treats as one token per character. */
export const isChineseChar = (cp: number): boolean =>
  (cp >= 0x4e00 && cp <= 0x9fff) ||
  (cp >= 0x3400 && cp <= 0x4dbf) ||
  (cp >= 0x20000 && cp <= 0x2a6df) ||
  (cp >= 0x2a700 && cp <= 0x2b73f) ||
  (cp >= 0x2b740 && cp <= 0x2b81f) ||
  (cp >= 0x2b820 && cp <= 0x2ceaf) ||
  (cp >= 0xf900 && cp <= 0xfaff) ||
  (cp >= 0x2f800 && cp <= 0x2fa1f);

const isWhitespace = (ch: string): boolean => ch === ' ' || ch === '\t' || ch === '\n' || ch === '\r' || /\p{Zs}/u.test(ch);
const isControl = (ch: string): boolean => ch !== '\t' && ch !== '\n' && ch !== '\r' && /\p{C}/u.test(ch);

/** ASCII non-alphanumerics count as punctuation, as in BERT, plus every Unicode P* character. */
export const isPunctuation = (ch: string): boolean => {
  const cp = ch.codePointAt(0)!;
  if ((cp >= 33 && cp <= 47) || (cp >= 58 && cp <= 64) || (cp >= 91 && cp <= 96) || (cp >= 123 && cp <= 126)) return true;
  return /\p{P}/u.test(ch);
};

export const stripAccents = (text: string): string => text.normalize('NFD').replace(/\p{Mn}/gu, '');

export const bertNormalize = (text: string, o: BertNormalizerOptions): string => {
  let out = '';
  for (const ch of text) {
    const cp = ch.codePointAt(0)!;
    if (o.cleanText) {
      if (cp === 0 || cp === 0xfffd || isControl(ch)) continue;
      if (isWhitespace(ch)) {
        out += ' ';
        continue;
      }
    }
    out += o.handleChineseChars && isChineseChar(cp) ? ` ${ch} ` : ch;
  }
  if (o.stripAccents) out = stripAccents(out);
  if (o.lowercase) out = out.toLowerCase();
  return out;
};

/** Split on whitespace, then make every punctuation character a word of its own. */
export const bertPreTokenize = (text: string): string[] => {
  const words: string[] = [];
  for (const chunk of text.split(/\s+/u)) {
    let word = '';
    for (const ch of chunk) {
      if (isPunctuation(ch)) {
        if (word) words.push(word);
        words.push(ch);
        word = '';
      } else word += ch;
    }
    if (word) words.push(word);
  }
  return words;
};
