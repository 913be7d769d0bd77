/**
 * A small Chinese stop list: single-character function words (particles, pronouns,
 * prepositions, the copula) and the commonest pronoun compounds. Negations (不, 没) are kept
 * on purpose: they change what a sentence says.
 */
export const CHINESE_STOP_WORDS: ReadonlySet<string> = new Set([
  '的', '了', '是', '在', '我', '你', '您', '他', '她', '它', '们', '和', '与', '及', '或', '也',
  '都', '就', '而', '着', '过', '吗', '呢', '吧', '啊', '呀', '哦', '嗯', '么', '之', '其', '这',
  '那', '有', '被', '把', '给', '对', '从', '向', '于', '以', '为', '很', '还', '又', '再', '个',
  '地', '得', '所', '让', '跟', '将', '并', '则', '即', '但', '却', '等', '啦', '哈', '嘛',
  '我们', '你们', '他们', '她们', '它们', '咱们', '这个', '那个', '这些', '那些', '自己', '什么',
]);
