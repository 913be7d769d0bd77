/** The first-person statement patterns the rule distiller recognises (Chinese and English). Pure data. */

export type FactPredicate = 'name' | 'lives_in' | 'from' | 'likes' | 'dislikes' | 'age' | 'works_as' | 'works_at';

/**
 * One pattern. `open` patterns match up to where the object begins and the object runs to the
 * end of the clause; `closed` patterns capture the object in group 1 (我在X工作, 我X岁).
 */
export type FactPattern = Readonly<{
  predicate: FactPredicate;
  shape: 'open' | 'closed';
  regex: RegExp;
}>;

const ZH_ADVERB = '(?:也|还|都|就|很|非常|最|特别|真的|真|超|挺|一直|现在|目前|如今|已经|今年)*';
const EN_ADVERB = '(?:(?:really|also|truly|just|still|totally|absolutely|actually|currently|now|do)\\s+)?';
const I_AM = "I(?:['’]m|\\s+am)";
const NOT_DONT = "(?:do\\s+not|don['’]t|dont)";

const open = (predicate: FactPredicate, source: string, flags = 'giu'): FactPattern => ({
  predicate,
  shape: 'open',
  regex: new RegExp(source, flags),
});
const closed = (predicate: FactPredicate, source: string, flags = 'giu'): FactPattern => ({
  predicate,
  shape: 'closed',
  regex: new RegExp(source, flags),
});

/** Chinese patterns. 我不喜欢X / 我讨厌X give `dislikes`; other negations give nothing. */
export const CHINESE_PATTERNS: readonly FactPattern[] = [
  open('name', `我${ZH_ADVERB}叫(?![了过着])`),
  open('name', '我的名字(?:是|叫)'),
  open('name', '我名字叫'),
  open('lives_in', `我${ZH_ADVERB}住在`),
  closed('lives_in', `我${ZH_ADVERB}在([^，,。；;、\\s]{1,40}?)住(?![院宿])`),
  open('likes', `我${ZH_ADVERB}(?:喜欢|爱|喜爱)(?!过)`),
  open('dislikes', `我${ZH_ADVERB}(?:不|并不|不太|不怎么)(?:喜欢|爱)`),
  open('dislikes', `我${ZH_ADVERB}讨厌`),
  closed('age', `我${ZH_ADVERB}([0-9]{1,3}|[零〇一二两三四五六七八九十百]{1,5})(?:周)?岁`),
  open('works_as', '我的(?:工作|职业)是'),
  open('works_as', `我${ZH_ADVERB}是一名`),
  closed('works_at', `我${ZH_ADVERB}在([^，,。；;、\\s]{1,40}?)(?:工作|上班)`),
];

/** English patterns; `I don't like X` / `I dislike X` / `I hate X` give `dislikes`. */
export const ENGLISH_PATTERNS: readonly FactPattern[] = [
  open('name', '\\bmy\\s+name\\s+is\\s+'),
  open('name', `\\b${I_AM}\\s+called\\s+`),
  open('name', '\\bcall\\s+me\\s+'),
  open('lives_in', `\\bI\\s+${EN_ADVERB}live\\s+in\\s+`),
  open('from', `\\b${I_AM}\\s+(?:originally\\s+)?from\\s+`),
  open('from', '\\bI\\s+(?:originally\\s+)?come\\s+from\\s+'),
  open('likes', `\\bI\\s+${EN_ADVERB}(?:like|love|enjoy)\\s+`),
  open('dislikes', `\\bI\\s+${NOT_DONT}\\s+${EN_ADVERB}(?:like|love|enjoy)\\s+`),
  open('dislikes', `\\bI\\s+${EN_ADVERB}(?:dislike|hate)\\s+`),
  closed(
    'age',
    `\\b${I_AM}\\s+([0-9]{1,3})(?:\\s*(?:years?|yrs?)(?:\\s+old|\\s+of\\s+age)?|\\s*y/?o)?(?=\\s*$|\\s*[,，;；:]|\\s+(?:and|but|because)\\b)`,
  ),
  open('works_as', '\\bI\\s+work\\s+as\\s+(?:an?\\s+)?'),
  open('works_as', '\\bmy\\s+(?:job|occupation|profession)\\s+is\\s+(?:an?\\s+)?'),
  open('works_at', '\\bI\\s+work\\s+(?:at|for)\\s+'),
];

export const ALL_PATTERNS: readonly FactPattern[] = [...CHINESE_PATTERNS, ...ENGLISH_PATTERNS];
