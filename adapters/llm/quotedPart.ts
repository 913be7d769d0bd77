/**
 * A provider's words quoted in an error, cut to a length without splitting a word: the scrub
 * that later replaces a key with its alias finds a key only whole, so a key cut in two by a
 * quote would leave its first part in clear. A word the cut would split is left out whole.
 */

/** Characters a key, a token or an encoding is made of: a cut between two of them could split one. */
const WORD_CHAR = /[\p{L}\p{N}+/=_\-.%~:]/u;

/** `text`, or its first `most` characters less a word the cut would split, marked with `…`. */
export const quotedPart = (text: string, most: number): string => {
  if (text.length <= most) return text;
  let end = most;
  if (WORD_CHAR.test(text[most]!)) while (end > 0 && WORD_CHAR.test(text[end - 1]!)) end--;
  return `${text.slice(0, end)}…`;
};
