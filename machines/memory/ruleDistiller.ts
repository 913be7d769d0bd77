/**
 * The pipeline's rule distiller: first-person statements (Chinese and English) become personal
 * facts about the speaker. Pure and deterministic: same text and speaker, same facts, same order.
 */
import { parseSmallNumber } from './chineseNumerals.ts';
import { ALL_PATTERNS, type FactPattern, type FactPredicate } from './factPatterns.ts';
import { splitSentences, type Sentence } from './sentences.ts';

export type { FactPredicate } from './factPatterns.ts';

/** A fact about `subject` (the speaker) with the sentence it came from. */
export type PersonalFact = Readonly<
  {
    subject: string;
    /** The whole sentence the fact was read from, terminator included. */
    sentence: string;
    /** `[start, end)` of `sentence` in the distilled text: `text.slice(...span) === sentence`. */
    span: readonly [number, number];
  } & ({ predicate: 'age'; object: number } | { predicate: Exclude<FactPredicate, 'age'>; object: string })
>;

/** Objects longer than this (in characters) are refused: they are clauses, not facts. */
export const MAX_OBJECT_LENGTH = 40;

const CLAUSE_BREAK =
  /[，,、;；:：()（）[\]【】…—~～]|\s+(?:and|but|because|so|although|though|while|since|whereas)\b|但是|可是|不过|而且|并且|因为|所以|然后/iu;
const TRAILING_FILLER =
  /(?:\s+(?:now|currently|today|these days|at the moment|right now|very much|so much|a lot|too|as well)|[了啊呀哦啦哈嘛呢吧的])+$/iu;
const QUOTES = /^["'“”‘’「」『』]+|["'“”‘’「」『』]+$/gu;
const NEGATED_BEFORE = /(?:\b(?:don['’]t|do\s+not|never|not)|[不没别])\s*$/iu;
const NEGATED_OBJECT = /^(?:not\b|n['’]t\b|never\b|不|没)/iu;
const NOT_A_NAME = /^(?:back|later|tomorrow|tonight|when|if|at|on|maybe|now|soon|anytime|again|sometime)\b/iu;

const PRONOUNS = new Set([
  'i',
  'me',
  'you',
  'him',
  'her',
  'it',
  'us',
  'them',
  'this',
  'that',
  'these',
  'those',
  'something',
  'anything',
  'everything',
  'nothing',
  'someone',
  'somebody',
  'anyone',
  'anybody',
  'everyone',
  'everybody',
  'here',
  'there',
  'what',
  'who',
  'whom',
  'myself',
  'yourself',
  'himself',
  'herself',
  'itself',
  'ourselves',
  'themselves',
  'mine',
  'yours',
  'his',
  'hers',
  'ours',
  'theirs',
  'one',
  '你',
  '您',
  '他',
  '她',
  '它',
  '我',
  '你们',
  '他们',
  '她们',
  '它们',
  '我们',
  '咱们',
  '大家',
  '自己',
  '这',
  '那',
  '这个',
  '那个',
  '这些',
  '那些',
  '这里',
  '那里',
  '这儿',
  '那儿',
  '谁',
  '什么',
  '哪',
  '哪里',
  '哪儿',
  '怎样',
  '怎么样',
]);

type Match = Readonly<{ pattern: FactPattern; order: number; start: number; objectStart: number; closedObject?: string }>;

/**
 * Personal facts stated by `speaker` in `text`, in the order they appear (pattern order breaks ties).
 * Questions yield nothing; `I don't like X` / 我不喜欢X yield `dislikes`; other negations yield nothing.
 *
 * @example distillPersonalFacts('我叫小明，我住在北京。', 'u1')
 * // [{ subject: 'u1', predicate: 'name', object: '小明', ... }, { predicate: 'lives_in', object: '北京', ... }]
 */
export const distillPersonalFacts = (text: string, speaker: string): PersonalFact[] =>
  splitSentences(text)
    .filter((sentence) => !sentence.question)
    .flatMap((sentence) => factsOf(sentence, speaker));

const factsOf = (sentence: Sentence, speaker: string): PersonalFact[] => {
  const matches = matchesIn(sentence.body);
  const facts: PersonalFact[] = [];
  const seen = new Set<string>();
  for (const match of matches) {
    if (NEGATED_BEFORE.test(sentence.body.slice(0, match.start))) continue;
    const fact = factOf(match, matches, sentence, speaker);
    if (!fact) continue;
    const key = `${fact.predicate}\u0000${String(fact.object)}`;
    if (seen.has(key)) continue;
    seen.add(key);
    facts.push(fact);
  }
  return facts;
};

const matchesIn = (body: string): Match[] => {
  const matches: Match[] = [];
  ALL_PATTERNS.forEach((pattern, order) => {
    for (const m of body.matchAll(pattern.regex)) {
      const start = m.index;
      const objectStart = start + m[0].length;
      matches.push(
        pattern.shape === 'closed'
          ? { pattern, order, start, objectStart, closedObject: m[1] ?? '' }
          : { pattern, order, start, objectStart },
      );
    }
  });
  return matches.sort((a, b) => a.start - b.start || a.order - b.order);
};

const factOf = (match: Match, all: readonly Match[], sentence: Sentence, speaker: string): PersonalFact | undefined => {
  const base = { subject: speaker, sentence: sentence.text, span: sentence.span } as const;
  const { predicate } = match.pattern;
  if (predicate === 'age') {
    const age = parseSmallNumber(match.closedObject ?? '');
    return age !== undefined && age > 0 && age <= 150 ? { ...base, predicate, object: age } : undefined;
  }
  const raw = match.closedObject ?? openObject(match, all, sentence.body);
  const object = cleanObject(raw);
  if (!acceptable(object, predicate)) return undefined;
  return { ...base, predicate, object };
};

/** An open object runs to the next statement in the same sentence, or to the end. */
const openObject = (match: Match, all: readonly Match[], body: string): string => {
  const next = all.find((other) => other.start >= match.objectStart);
  return body.slice(match.objectStart, next ? next.start : body.length);
};

const cleanObject = (raw: string): string => {
  const cut = CLAUSE_BREAK.exec(raw);
  let object = (cut ? raw.slice(0, cut.index) : raw).trim();
  object = object.replace(TRAILING_FILLER, '').replace(QUOTES, '').trim();
  return object.replace(/\s+/gu, ' ');
};

const acceptable = (object: string, predicate: FactPredicate): boolean => {
  if (object === '' || [...object].length > MAX_OBJECT_LENGTH) return false;
  if (!/[\p{L}\p{N}]/u.test(object)) return false;
  if (PRONOUNS.has(object.toLowerCase()) || NEGATED_OBJECT.test(object)) return false;
  return !(predicate === 'name' && NOT_A_NAME.test(object));
};
