/** What a recall query names besides its words: days and months as UTC windows, and known people. */
import { describe, expect, it } from 'vitest';
import { personsNamedIn, timeWindowsOf } from '../../../projections/memory/recall/recallQuery.ts';

const DAY = 86_400_000;
const day = (y: number, m: number, d: number) => ({ from: Date.UTC(y, m - 1, d), to: Date.UTC(y, m - 1, d) + DAY });
const month = (y: number, m: number) => ({ from: Date.UTC(y, m - 1, 1), to: Date.UTC(y, m, 1) });

describe('timeWindowsOf', () => {
  it.each([
    ['What dish did Nate make on 9 November, 2022?', [day(2022, 11, 9)]],
    ['What painting did Melanie show on October 13, 2023?', [day(2023, 10, 13)]],
    ['on the 3rd of Sept 2021', [day(2021, 9, 3)]],
    ['logs from 2022-02-28', [day(2022, 2, 28)]],
    ['我2023年5月7日去了上海', [day(2023, 5, 7)]],
  ])('reads a named day: %s', (query, windows) => {
    expect(timeWindowsOf(query)).toEqual(windows);
  });

  it.each([
    ['Where did Joanna travel to in July 2022?', [month(2022, 7)]],
    ['Was December, 2023 a good month?', [month(2023, 12)]],
    ['2023年6月的事', [month(2023, 6)]],
  ])('reads a named month: %s', (query, windows) => {
    expect(timeWindowsOf(query)).toEqual(windows);
  });

  it('reads a day once (not again as its month), and several in order', () => {
    expect(timeWindowsOf('between May 2023 and 2 March, 2023')).toEqual([day(2023, 3, 2), month(2023, 5)]);
  });

  it('reads spans relative to when the query is asked, only when that is known', () => {
    const now = Date.UTC(2024, 2, 14, 9); // a Thursday
    expect(timeWindowsOf('What did I say yesterday?', now)).toEqual([day(2024, 3, 13)]);
    expect(timeWindowsOf('我昨天说了什么', now)).toEqual([day(2024, 3, 13)]);
    expect(timeWindowsOf('the day before yesterday', now)).toEqual([day(2024, 3, 12)]);
    expect(timeWindowsOf('last week', now)).toEqual([{ from: Date.UTC(2024, 2, 4), to: Date.UTC(2024, 2, 11) }]);
    expect(timeWindowsOf('上个月', now)).toEqual([month(2024, 2)]);
    expect(timeWindowsOf('last year', now)).toEqual([{ from: Date.UTC(2023, 0, 1), to: Date.UTC(2024, 0, 1) }]);
    expect(timeWindowsOf('What did I say yesterday?')).toEqual([]);
  });

  it('reads the relative words people use for days and weekends before (and after) the day asked', () => {
    const now = Date.UTC(2024, 2, 14, 9); // a Thursday
    expect(timeWindowsOf('I watched it last night', now)).toEqual([day(2024, 3, 13)]);
    expect(timeWindowsOf('see you tomorrow', now)).toEqual([day(2024, 3, 15)]);
    expect(timeWindowsOf('I went last Friday', now)).toEqual([day(2024, 3, 8)]);
    expect(timeWindowsOf('this past Thursday', now)).toEqual([day(2024, 3, 7)]);
    expect(timeWindowsOf('last weekend', now)).toEqual([{ from: Date.UTC(2024, 2, 9), to: Date.UTC(2024, 2, 11) }]);
    expect(timeWindowsOf('two weekends ago', now)).toEqual([{ from: Date.UTC(2024, 2, 2), to: Date.UTC(2024, 2, 4) }]);
    expect(timeWindowsOf('3 days ago', now)).toEqual([day(2024, 3, 11)]);
    expect(timeWindowsOf('a week ago', now)).toEqual([{ from: Date.UTC(2024, 2, 4), to: Date.UTC(2024, 2, 11) }]);
    expect(timeWindowsOf('two months ago', now)).toEqual([month(2024, 1)]);
    expect(timeWindowsOf('next month', now)).toEqual([month(2024, 4)]);
  });

  it('reads a month named without its year as the last such month up to the day asked, only when that is known', () => {
    const now = Date.UTC(2024, 2, 14, 9);
    expect(timeWindowsOf('Which outdoor spot did Joanna visit in May?', now)).toEqual([month(2023, 5)]);
    expect(timeWindowsOf('What happened in early March?', now)).toEqual([month(2024, 3)]);
    expect(timeWindowsOf('since February', now)).toEqual([month(2024, 2)]);
    expect(timeWindowsOf('in May 2022', now)).toEqual([month(2022, 5)]);
    expect(timeWindowsOf('May I ask what you did?', now)).toEqual([]);
    expect(timeWindowsOf('in May?')).toEqual([]);
  });

  it('names no time for impossible dates, bare months without the day asked or "may" the verb', () => {
    expect(timeWindowsOf('on February 30, 2022')).toEqual([]);
    expect(timeWindowsOf('2022-13-01')).toEqual([]);
    expect(timeWindowsOf('Which outdoor spot did Joanna visit in May?')).toEqual([]);
    expect(timeWindowsOf('May I ask what you did?')).toEqual([]);
  });
});

describe('personsNamedIn', () => {
  const known = ['Caroline', 'Melanie', 'Mel', '张三'];

  it('returns the known people a query names, in the order it names them, as known spells them', () => {
    expect(personsNamedIn("What does melanie think of Caroline's decision?", known)).toEqual(['Melanie', 'Caroline']);
  });

  it('matches whole words only in spaced scripts, and inside Chinese text', () => {
    expect(personsNamedIn('Melanies and Mellow', known)).toEqual([]);
    expect(personsNamedIn('张三喜欢什么', known)).toEqual(['张三']);
  });

  it('names nobody when no known person is in the query', () => {
    expect(personsNamedIn('What is the capital of France?', known)).toEqual([]);
  });
});
