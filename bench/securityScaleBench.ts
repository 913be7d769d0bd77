/**
 * The firewall's text searches as the vault and the word list grow: the same texts scrubbed and
 * reviewed with thousands of secrets or words against a handful, in the same run.
 *
 *   security.scale.scrub   ms to find 2,000 secrets' written forms (five each, as the scrub makes
 *                          them) in a 512 KB tool result vs 5 secrets', one pass of StringFinder each.
 *   security.scale.review  ms to review a 112 KB text against 2,000 sensitive words (half
 *                          ASCII, half Han) vs 5 words, patterns made (a warm list, as a running daemon has).
 *   security.scale.shared  ms to review 100 KB of a prefix 5,000 URL-like words share vs the same
 *                          text against 5 of them: the words' shared part is not where they are looked for.
 *
 * Lower is better; a ratio near 1 means the cost does not grow with the list.
 */
import { writtenForms } from '../adapters/secrets/writtenForms.ts';
import { finderOf, type Needles, reviewContent } from '../machines/security/index.ts';
import type { BenchContext } from './context.ts';
import { makeFigure, type Figure } from './figures.ts';
import { log, median } from './measure.ts';

const PROSE = 'The garden plan for the week: water the tomatoes early, move the basil into the shade. ';
/** Flat (not a rope of repeats), as a tool's answer read from a socket is. */
const flat = (text: string): string => Buffer.from(text).toString();

/** Each secret's written forms, as the vault's scrub looks for them. */
const secretForms = (count: number): Needles =>
  Array.from({ length: count }, (_, i) => {
    const value = `sk-"live/${i}-${(i * 7919).toString(36)}${'abcdefghij'.slice(i % 10)}`;
    return writtenForms(value).map((form) => [`KEY_${i}`, form] as const);
  }).flat();

const words = (count: number): string[] =>
  Array.from({ length: count }, (_, i) =>
    i % 2 ? `codeword${i.toString(36)}` : String.fromCharCode(0x4e00 + ((i * 37) % 20_000), 0x4e00 + ((i * 91) % 20_000)),
  );

/** Median ms of `reps` runs of `work` (after one untimed run). */
const timed = (reps: number, work: () => unknown): number => {
  work();
  const times: number[] = [];
  for (let i = 0; i < reps; i++) {
    const t0 = performance.now();
    work();
    times.push(performance.now() - t0);
  }
  return median(times);
};

export const securityScale = async (ctx: BenchContext): Promise<Figure[]> => {
  const reps = Math.max(5, ctx.reps);
  const result = flat(`${PROSE.repeat(6_000).slice(0, 512 * 1024)} sk-"live/7-5dkhij`);
  const many = finderOf(secretForms(2_000));
  const few = finderOf(secretForms(5));
  log('security.scale: scrub');
  const scrubMany = timed(reps, () => many.find(result, []));
  const scrubFew = timed(reps, () => few.find(result, []));

  const page = flat(`${'今天天气很好，我们去公园散步。'.repeat(2_500)}${PROSE.repeat(800)}`);
  const manyWords = words(2_000);
  const fewWords = words(5);
  log('security.scale: review');
  const reviewMany = timed(reps, () => reviewContent(page, { words: manyWords }, 'tool_result'));
  const reviewFew = timed(reps, () => reviewContent(page, { words: fewWords }, 'tool_result'));

  const prefix = 'https://intranet.example.com/projects/';
  const urls = Array.from({ length: 5_000 }, (_, i) => `${prefix}${String(i).padStart(5, '0')}`);
  const shared = flat(prefix.repeat(2_600));
  log('security.scale: shared prefix');
  const sharedMany = timed(reps, () => reviewContent(shared, { words: urls }, 'tool_result'));
  const sharedFew = timed(reps, () => reviewContent(shared, { words: urls.slice(0, 5) }, 'tool_result'));

  return [
    makeFigure('security.scale.scrub', 'ms/scrub (lower is better)', scrubMany, scrubFew, {
      note: `512 KB tool result; 2,000 secrets' forms vs 5 secrets', median of ${reps}`,
    }),
    makeFigure('security.scale.review', 'ms/review (lower is better)', reviewMany, reviewFew, {
      note: `112 KB of Chinese and English; 2,000 sensitive words vs 5, median of ${reps}`,
    }),
    makeFigure('security.scale.shared', 'ms/review (lower is better)', sharedMany, sharedFew, {
      note: `100 KB of the prefix 5,000 URL-like words share; all of them vs 5, median of ${reps}`,
    }),
  ];
};
