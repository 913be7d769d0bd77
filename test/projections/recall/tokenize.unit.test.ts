/** The lexical tokenizer: jieba for Chinese runs, lowercase + stop words + Porter for the rest. */
import { describe, expect, it } from 'vitest';
import { tokenize } from '../../../actors/memory/lexicon.ts';

describe('tokenize', () => {
  it('cuts Chinese into words and drops Chinese function words', () => {
    const tokens = tokenize('我住在北京，我喜欢吃火锅');
    expect(tokens).toContain('北京');
    expect(tokens).toContain('火锅'); // search mode also yields the part of 吃火锅
    expect(tokens).toContain('喜欢');
    for (const stop of ['我', '在', '，']) expect(tokens).not.toContain(stop);
  });

  it('keeps a name whole (HMM on)', () => {
    expect(tokenize('小明去了上海')).toEqual(expect.arrayContaining(['小明', '上海']));
    expect(tokenize('小明去了上海')).not.toContain('了');
  });

  it('lowercases, drops English stop words and Porter-stems', () => {
    // the, were: stop words; runners → runner (1a), running → run (1b), quickly → quickli (1c)
    expect(tokenize('The runners were running quickly')).toEqual(['runner', 'run', 'quickli']);
  });

  it('brings irregular verbs and plurals to their base form, so a question in the present finds a statement in the past', () => {
    const question = tokenize('What did she buy for the children?');
    const statement = tokenize('I bought toys for my child');
    expect(question).toEqual([tokenize('buy')[0], 'child']);
    expect(statement).toEqual(expect.arrayContaining(question));
    expect(tokenize('We went there, people were kind')).toEqual(['go', 'person', 'kind']);
    // "lives" stays a verb: she lives in Oslo.
    expect(tokenize('She lives in Oslo')).toEqual(['live', 'oslo']);
  });

  it('splits English on anything but letters and digits, keeping numbers', () => {
    expect(tokenize("Caroline's 3 dogs, born 2019-05-01!")).toEqual(['carolin', '3', 'dog', 'born', '2019', '05', '01']);
  });

  it('handles mixed Chinese and English in one text', () => {
    const tokens = tokenize('I met Caroline in 上海 in 2023, 我们吃了小笼包');
    expect(tokens.slice(0, 4)).toEqual(['meet', 'carolin', '上海', '2023']);
    expect(tokens).toContain('小笼包');
    for (const stop of ['i', 'in', '我们', '了']) expect(tokens).not.toContain(stop);
  });

  it('splits a Latin word glued to Chinese and leaves non-ASCII words unstemmed', () => {
    expect(tokenize('iPhone手机')).toEqual(['iphon', '手机']);
    expect(tokenize('café naïve')).toEqual(['café', 'naïve']);
  });

  it('folds full-width forms (NFKC) before splitting', () => {
    expect(tokenize('Ｒｕｎｎｉｎｇ １２３')).toEqual(['run', '123']);
  });

  it('returns nothing for empty, punctuation-only or stop-word-only text', () => {
    expect(tokenize('')).toEqual([]);
    expect(tokenize('… —— ！？')).toEqual([]);
    expect(tokenize('the and of to was')).toEqual([]);
    expect(tokenize('我的是了')).toEqual([]);
  });

  it('is deterministic', () => {
    const text = 'Melanie painted a sunrise; 她画了日出 in 2022.';
    expect(tokenize(text)).toEqual(tokenize(text));
  });
});
