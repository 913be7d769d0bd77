/** Reads small Chinese numerals (零 to 九百九十九) and ASCII digits as integers. Pure. */

const DIGITS: Readonly<Record<string, number>> = {
  零: 0,
  〇: 0,
  一: 1,
  二: 2,
  两: 2,
  三: 3,
  四: 4,
  五: 5,
  六: 6,
  七: 7,
  八: 8,
  九: 9,
};

/**
 * The integer an ASCII-digit or Chinese numeral spells, or `undefined` when it is not one.
 *
 * @example parseSmallNumber('二十五') // 25
 * @example parseSmallNumber('一百零五') // 105
 */
export const parseSmallNumber = (text: string): number | undefined => {
  if (/^[0-9]+$/.test(text)) return Number(text);
  if (!/^[零〇一二两三四五六七八九十百]+$/.test(text)) return undefined;
  let total = 0;
  let pending: number | undefined;
  let lastUnit = Infinity;
  for (const char of text) {
    const digit = DIGITS[char];
    if (digit !== undefined) {
      if (pending !== undefined && digit !== 0) return undefined; // 二三: two digits in a row
      pending = digit === 0 ? undefined : digit;
      continue;
    }
    const unit = char === '百' ? 100 : 10;
    if (unit >= lastUnit) return undefined; // 十百, 十十
    total += (pending ?? 1) * unit;
    pending = undefined;
    lastUnit = unit;
  }
  return total + (pending ?? 0);
};
