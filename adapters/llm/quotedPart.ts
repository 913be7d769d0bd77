/**
 * A provider's words quoted in an error, cut to a length without splitting a word: the scrub
 * that later replaces a key with its alias finds a key only whole, so a key cut in two by a
 * quote would leave its first part in clear. A word (a run without white space) the cut would
 * split is left out whole; the caller replaces the key it sent before cutting, for a key with
 * white space in it.
 */

const SPACE = /\s/;

/** `text`, or its first `most` characters less a word the cut would split, marked with `…`. */
export const quotedPart = (text: string, most: number): string => {
  if (text.length <= most) return text;
  let end = most;
  if (!SPACE.test(text[most]!)) while (end > 0 && !SPACE.test(text[end - 1]!)) end--;
  return `${text.slice(0, end)}…`;
};
