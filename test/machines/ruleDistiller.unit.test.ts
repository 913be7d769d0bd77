/** The rule distiller: each first-person pattern in Chinese and English, negation, trimming, questions. */
import { describe, expect, it } from 'vitest';
import { distillPersonalFacts, parseSmallNumber, splitSentences, type PersonalFact } from '../../machines/memory/index.ts';

const facts = (text: string) => distillPersonalFacts(text, 'alice').map(({ predicate, object }) => [predicate, object]);
const one = (text: string) => {
  const found = facts(text);
  expect(found, text).toHaveLength(1);
  return found[0];
};

describe('distillPersonalFacts: Chinese patterns', () => {
  it.each([
    ['我叫小明', 'name', '小明'],
    ['我的名字是李雷。', 'name', '李雷'],
    ['我住在北京。', 'lives_in', '北京'],
    ['我现在在上海住。', 'lives_in', '上海'],
    ['我喜欢猫。', 'likes', '猫'],
    ['我爱吃火锅。', 'likes', '吃火锅'],
    ['我25岁。', 'age', 25],
    ['我今年二十五岁。', 'age', 25],
    ['我今年十八岁', 'age', 18],
    ['我的工作是老师。', 'works_as', '老师'],
    ['我是一名医生。', 'works_as', '医生'],
    ['我在腾讯工作。', 'works_at', '腾讯'],
  ] as const)('%s → %s %s', (text, predicate, object) => {
    expect(one(text)).toEqual([predicate, object]);
  });

  it('reads Chinese numerals', () => {
    expect([
      parseSmallNumber('十'),
      parseSmallNumber('十五'),
      parseSmallNumber('二十五'),
      parseSmallNumber('一百零五'),
      parseSmallNumber('两'),
    ]).toEqual([10, 15, 25, 105, 2]);
    expect(parseSmallNumber('二三')).toBeUndefined();
    expect(parseSmallNumber('abc')).toBeUndefined();
  });
});

describe('distillPersonalFacts: English patterns', () => {
  it.each([
    ['My name is John Smith.', 'name', 'John Smith'],
    ["I'm called Bob.", 'name', 'Bob'],
    ['Call me Ishmael.', 'name', 'Ishmael'],
    ['I live in Paris.', 'lives_in', 'Paris'],
    ["I'm from Ohio.", 'from', 'Ohio'],
    ['I like jazz.', 'likes', 'jazz'],
    ['I love hiking.', 'likes', 'hiking'],
    ['I enjoy chess.', 'likes', 'chess'],
    ['I am 30 years old.', 'age', 30],
    ["I'm 25.", 'age', 25],
    ['I work as a nurse.', 'works_as', 'nurse'],
    ['I work at Google.', 'works_at', 'Google'],
    ['My job is a chef.', 'works_as', 'chef'],
  ] as const)('%s → %s %s', (text, predicate, object) => {
    expect(one(text)).toEqual([predicate, object]);
  });

  it("does not read 'I'm 5 minutes late' as an age, nor 'call me tomorrow' as a name", () => {
    expect(facts("I'm 5 minutes late. Please call me tomorrow. I'd like a coffee.")).toEqual([]);
  });
});

describe('distillPersonalFacts: negation gives dislikes, never likes', () => {
  it.each([
    ["I don't like cats.", 'cats'],
    ['I do not like dogs.', 'dogs'],
    ['I hate mondays.', 'mondays'],
    ['我不喜欢香菜。', '香菜'],
    ['我讨厌下雨。', '下雨'],
  ])('%s → dislikes %s', (text, object) => {
    expect(facts(text)).toEqual([['dislikes', object]]);
  });

  it('other negations give nothing', () => {
    expect(facts("I don't live in Paris. Don't call me Bob. My name is not Bob. 我不住在北京。")).toEqual([]);
  });
});

describe('distillPersonalFacts: trimming and refusal', () => {
  it('cuts objects at punctuation and conjunctions', () => {
    expect(facts('I like rock and roll.')).toEqual([['likes', 'rock']]);
    expect(facts('I live in Berlin, the capital.')).toEqual([['lives_in', 'Berlin']]);
    expect(facts('I enjoy hiking because it is quiet.')).toEqual([['likes', 'hiking']]);
    expect(facts('I like tea but not coffee.')).toEqual([['likes', 'tea']]);
    expect(facts('我喜欢猫但是不喜欢狗。')).toEqual([['likes', '猫']]);
    expect(facts('我住在北京，离公司很近。')).toEqual([['lives_in', '北京']]);
    expect(facts('我喜欢喝茶而且喜欢看书。')).toEqual([['likes', '喝茶']]);
    expect(facts('I live in Paris now.')).toEqual([['lives_in', 'Paris']]);
  });

  it('refuses pronouns, empty and over-long objects', () => {
    expect(facts('I love you. I like it very much. 我爱你。我喜欢这个。I like .')).toEqual([]);
    expect(facts(`I like ${'very '.repeat(10)}long things.`)).toEqual([]);
    expect(facts(`我喜欢${'长'.repeat(41)}。`)).toEqual([]);
    expect(facts(`我喜欢${'长'.repeat(40)}。`)).toHaveLength(1);
  });
});

describe('distillPersonalFacts: several facts, order, provenance', () => {
  it('finds several facts in one text, in reading order', () => {
    expect(facts('我叫小明，我住在北京。我今年二十五岁！My name is Ann and I live in Oslo.')).toEqual([
      ['name', '小明'],
      ['lives_in', '北京'],
      ['age', 25],
      ['name', 'Ann'],
      ['lives_in', 'Oslo'],
    ]);
  });

  it('ends an object where the next statement in the sentence begins', () => {
    expect(facts('我叫小明我住在北京')).toEqual([
      ['name', '小明'],
      ['lives_in', '北京'],
    ]);
  });

  it('points at the sentence it read, and is deterministic', () => {
    const text = '  Hello there.  I live in Paris!\n我喜欢猫。';
    const found = distillPersonalFacts(text, 'alice');
    expect(found.map((f) => [f.subject, f.sentence, f.span])).toEqual([
      ['alice', 'I live in Paris!', [16, 32]],
      ['alice', '我喜欢猫。', [33, 38]],
    ]);
    for (const f of found) expect(text.slice(...f.span)).toBe(f.sentence);
    expect(distillPersonalFacts(text, 'alice')).toEqual(found);
  });

  it('keeps decimals and domains inside one sentence', () => {
    expect(splitSentences('I work at example.com. Pi is 3.14').map((s) => s.text)).toEqual(['I work at example.com.', 'Pi is 3.14']);
    expect(facts('I work at example.com.')).toEqual([['works_at', 'example.com']]);
  });

  it('types age as a number', () => {
    const [fact] = distillPersonalFacts('I am 41 years old', 'bob') as [PersonalFact];
    expect(fact.predicate === 'age' && typeof fact.object === 'number').toBe(true);
  });
});

describe('distillPersonalFacts: questions give nothing', () => {
  it.each([
    'Do you live in London?',
    'do I live in London',
    'Where do I live in Paris.',
    'Is my name Bob?',
    'I live in London?',
    'What do I like?',
    '你住在北京吗？',
    '我住在北京吗',
    '我叫什么？',
    '我喜欢猫？',
  ])('%s', (text) => {
    expect(facts(text)).toEqual([]);
  });
});
