/**
 * What a recall query says besides its words: the people it names (whose own words answer a
 * question about them) and the dates it names (what was said then). Pure functions of the text;
 * dates are read as UTC calendar days, the way the kernel stamps events.
 */

/** A span of time a query names, [from, to) in epoch ms. */
export type TimeWindow = Readonly<{ from: number; to: number }>;

const DAY_MS = 86_400_000;

const MONTHS: Readonly<Record<string, number>> = {
  january: 0,
  jan: 0,
  february: 1,
  feb: 1,
  march: 2,
  mar: 2,
  april: 3,
  apr: 3,
  may: 4,
  june: 5,
  jun: 5,
  july: 6,
  jul: 6,
  august: 7,
  aug: 7,
  september: 8,
  sep: 8,
  sept: 8,
  october: 9,
  oct: 9,
  november: 10,
  nov: 10,
  december: 11,
  dec: 11,
};

const MONTH =
  '(January|February|March|April|May|June|July|August|September|October|November|December|Jan|Feb|Mar|Apr|Jun|Jul|Aug|Sept?|Oct|Nov|Dec)\\.?';
const DAY = '(\\d{1,2})(?:st|nd|rd|th)?';
const YEAR = '(\\d{4})';

/** Day-precision forms: 9 November, 2022 · November 9, 2022 · 2022-11-09 · 2022年11月9日. */
const DAY_FORMS: readonly { re: RegExp; parts: (m: RegExpExecArray) => [year: string, month: number, day: string] }[] = [
  { re: new RegExp(`\\b${DAY}\\s+(?:of\\s+)?${MONTH},?\\s+${YEAR}\\b`, 'g'), parts: (m) => [m[3]!, MONTHS[m[2]!.toLowerCase()]!, m[1]!] },
  { re: new RegExp(`\\b${MONTH}\\s+${DAY},?\\s+${YEAR}\\b`, 'g'), parts: (m) => [m[3]!, MONTHS[m[1]!.toLowerCase()]!, m[2]!] },
  { re: /\b(\d{4})-(\d{2})-(\d{2})\b/g, parts: (m) => [m[1]!, Number(m[2]) - 1, m[3]!] },
  { re: /(\d{4})年(\d{1,2})月(\d{1,2})[日号]/g, parts: (m) => [m[1]!, Number(m[2]) - 1, m[3]!] },
];

/** Month-precision forms: November 2022 · 2022年11月. */
const MONTH_FORMS: readonly { re: RegExp; parts: (m: RegExpExecArray) => [year: string, month: number] }[] = [
  { re: new RegExp(`\\b${MONTH},?\\s+(?:of\\s+)?${YEAR}\\b`, 'g'), parts: (m) => [m[2]!, MONTHS[m[1]!.toLowerCase()]!] },
  { re: /(\d{4})年(\d{1,2})月/g, parts: (m) => [m[1]!, Number(m[2]) - 1] },
];

/** Spans relative to the day the query is asked: [start, end) as (days from today) or whole weeks, months, years. */
type Relative = Readonly<{ re: RegExp; window: (now: Date, match: readonly string[]) => TimeWindow }>;

const startOfDay = (now: Date): number => Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate());
const days = (now: Date, from: number, to: number): TimeWindow => ({
  from: startOfDay(now) + from * DAY_MS,
  to: startOfDay(now) + to * DAY_MS,
});
/** Weeks start on Monday. */
const week = (now: Date, offset: number): TimeWindow => {
  const monday = startOfDay(now) - ((now.getUTCDay() + 6) % 7) * DAY_MS + offset * 7 * DAY_MS;
  return { from: monday, to: monday + 7 * DAY_MS };
};
const month = (now: Date, offset: number): TimeWindow => ({
  from: Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + offset, 1),
  to: Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + offset + 1, 1),
});
const year = (now: Date, offset: number): TimeWindow => ({
  from: Date.UTC(now.getUTCFullYear() + offset, 0, 1),
  to: Date.UTC(now.getUTCFullYear() + offset + 1, 0, 1),
});

/** The weekend (Saturday and Sunday) of the week `offset` weeks from this one. */
const weekend = (now: Date, offset: number): TimeWindow => {
  const { from } = week(now, offset);
  return { from: from + 5 * DAY_MS, to: from + 7 * DAY_MS };
};
const WEEKDAYS = ['sunday', 'monday', 'tuesday', 'wednesday', 'thursday', 'friday', 'saturday'] as const;
/** The latest `weekday` (0 = Sunday) before today. */
const lastWeekday = (now: Date, weekday: number): TimeWindow => {
  const back = (now.getUTCDay() - weekday + 7) % 7 || 7;
  return days(now, -back, -back + 1);
};
const COUNTS: Readonly<Record<string, number>> = {
  a: 1,
  an: 1,
  one: 1,
  two: 2,
  three: 3,
  four: 4,
  five: 5,
  six: 6,
  seven: 7,
  eight: 8,
  nine: 9,
  ten: 10,
};
const countOf = (word: string): number => COUNTS[word.toLowerCase()] ?? Number(word);
/** "two weeks ago": the day, week, weekend, month or year that many before this one. */
const ago = (now: Date, count: number, unit: string): TimeWindow => {
  switch (unit.toLowerCase()) {
    case 'day':
      return days(now, -count, -count + 1);
    case 'week':
      return week(now, -count);
    case 'weekend':
      return weekend(now, -count);
    case 'month':
      return month(now, -count);
    default:
      return year(now, -count);
  }
};

const RELATIVE: readonly Relative[] = [
  { re: /\bthe day before yesterday\b|前天/gi, window: (now) => days(now, -2, -1) },
  { re: /\byesterday\b|\blast night\b|昨天|昨日|昨晚/gi, window: (now) => days(now, -1, 0) },
  { re: /\btoday\b|\btonight\b|今天|今日|今晚/gi, window: (now) => days(now, 0, 1) },
  { re: /\btomorrow\b|明天/gi, window: (now) => days(now, 1, 2) },
  {
    re: /\b(a|an|one|two|three|four|five|six|seven|eight|nine|ten|\d{1,2}) (day|week|weekend|month|year)s? ago\b/gi,
    window: (now, m) => ago(now, countOf(m[1]!), m[2]!),
  },
  { re: /\b(?:last|this past|past) weekend\b|上个?周末/gi, window: (now) => weekend(now, -1) },
  { re: /\bthis weekend\b|这个?周末|本周末/gi, window: (now) => weekend(now, 0) },
  {
    re: /\b(?:last|this past|past) (sunday|monday|tuesday|wednesday|thursday|friday|saturday)\b/gi,
    window: (now, m) => lastWeekday(now, WEEKDAYS.indexOf(m[1]!.toLowerCase() as (typeof WEEKDAYS)[number])),
  },
  { re: /\blast week\b|上个?(?:星期|周|礼拜)/gi, window: (now) => week(now, -1) },
  { re: /\bnext week\b|下个?(?:星期|周|礼拜)/gi, window: (now) => week(now, 1) },
  { re: /\bthis week\b|这个?(?:星期|周|礼拜)|本周/gi, window: (now) => week(now, 0) },
  { re: /\blast month\b|上个?月/gi, window: (now) => month(now, -1) },
  { re: /\bnext month\b|下个?月/gi, window: (now) => month(now, 1) },
  { re: /\bthis month\b|这个月|本月/gi, window: (now) => month(now, 0) },
  { re: /\blast year\b|去年/gi, window: (now) => year(now, -1) },
  { re: /\bthis year\b|今年/gi, window: (now) => year(now, 0) },
];

/** A month named without its year after a word that places something in it ("in June", "early March"): read as the last such month up to when the query is asked. */
const BARE_MONTH = new RegExp(
  `\\b(?:in|during|since|until|by|through|early|late|mid|of)[\\s-]+${MONTH}(?![\\p{L}\\p{N}]|\\s*,?\\s*\\d)`,
  'gu',
);

const lastMonthNamed = (now: Date, month: number): TimeWindow => {
  const year = now.getUTCFullYear() - (month > now.getUTCMonth() ? 1 : 0);
  return { from: Date.UTC(year, month, 1), to: Date.UTC(year, month + 1, 1) };
};

const validDay = (year: number, month: number, day: number): boolean =>
  month >= 0 && month < 12 && day >= 1 && new Date(Date.UTC(year, month, day)).getUTCMonth() === month;

/**
 * The calendar days and months a query names, each a UTC window. A named day spans that day
 * only; a named month the whole month. Text a day form consumed is not read again as a month.
 * With `now` (when the query is asked), relative spans count too: yesterday, last week, this
 * month, last year (and 昨天, 上周, 本月, 去年); weeks start on Monday.
 *
 * @example
 * timeWindowsOf('What dish did Nate make on 9 November, 2022?') // [{ from: Date.UTC(2022, 10, 9), to: Date.UTC(2022, 10, 10) }]
 */
export const timeWindowsOf = (query: string, now?: number): TimeWindow[] => {
  const windows: TimeWindow[] = [];
  let rest = query;
  if (now !== undefined) {
    const today = new Date(now);
    for (const relative of RELATIVE) {
      rest = rest.replace(relative.re, (...match: string[]) => {
        windows.push(relative.window(today, match));
        return ' ';
      });
    }
  }
  for (const form of DAY_FORMS) {
    rest = rest.replace(form.re, (...args) => {
      const m = args.slice(0, -2) as unknown as RegExpExecArray;
      const [y, month, d] = form.parts(m);
      const year = Number(y);
      const day = Number(d);
      if (!validDay(year, month, day)) return m[0];
      const from = Date.UTC(year, month, day);
      windows.push({ from, to: from + DAY_MS });
      return ' ';
    });
  }
  for (const form of MONTH_FORMS) {
    rest = rest.replace(form.re, (...args) => {
      const m = args.slice(0, -2) as unknown as RegExpExecArray;
      const [y, month] = form.parts(m);
      if (month < 0 || month > 11) return m[0];
      const year = Number(y);
      windows.push({ from: Date.UTC(year, month, 1), to: Date.UTC(year, month + 1, 1) });
      return ' ';
    });
  }
  if (now !== undefined) {
    const today = new Date(now);
    rest = rest.replace(BARE_MONTH, (...args) => {
      windows.push(lastMonthNamed(today, MONTHS[String(args[1]).toLowerCase()]!));
      return ' ';
    });
  }
  return windows.sort((a, b) => a.from - b.from);
};

const escapeRegExp = (s: string): string => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/**
 * The known people a query names, in the order it names them (case-insensitive; whole words in
 * scripts that separate words, so a possessive `'s` counts). Names are returned as `known` spells them.
 *
 * @example
 * personsNamedIn("What do Melanie's kids like?", ['Caroline', 'Melanie']) // ['Melanie']
 */
export const personsNamedIn = (query: string, known: Iterable<string>): string[] => {
  const found: { name: string; at: number }[] = [];
  for (const name of known) {
    if (name.trim() === '') continue;
    // Names in scripts written with spaces between words match whole words; a Chinese name inside Chinese text has no boundary to match.
    const before = /^[\p{Script=Latin}\p{Script=Cyrillic}\p{Script=Greek}\p{N}]/u.test(name) ? '(?<![\\p{L}\\p{N}])' : '';
    const after = /[\p{Script=Latin}\p{Script=Cyrillic}\p{Script=Greek}\p{N}]$/u.test(name) ? '(?![\\p{L}\\p{N}])' : '';
    const match = new RegExp(`${before}${escapeRegExp(name)}${after}`, 'iu').exec(query);
    if (match) found.push({ name, at: match.index });
  }
  return found.sort((a, b) => a.at - b.at || (a.name < b.name ? -1 : 1)).map((f) => f.name);
};
