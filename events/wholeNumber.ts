/**
 * A whole number as a person types one in a flag or a query: digits only. Number() would read ''
 * and ' ' as 0, and '0x10', '1e3' and '1.0' as numbers.
 */
export const wholeNumberOf = (text: string): number => (/^\d+$/.test(text) ? Number(text) : Number.NaN);
