/**
 * A compact English stop-word list (the classic NLTK/Snowball set of pronouns, articles,
 * auxiliaries, conjunctions and prepositions, plus the contraction fragments a split on
 * apostrophes leaves behind; 'won' is left out since it is also the past of 'win'). Matched on lowercased tokens before stemming.
 */
export const ENGLISH_STOP_WORDS: ReadonlySet<string> = new Set([
  'i', 'me', 'my', 'myself', 'we', 'our', 'ours', 'ourselves', 'you', 'your', 'yours', 'yourself',
  'yourselves', 'he', 'him', 'his', 'himself', 'she', 'her', 'hers', 'herself', 'it', 'its', 'itself',
  'they', 'them', 'their', 'theirs', 'themselves', 'what', 'which', 'who', 'whom', 'this', 'that',
  'these', 'those', 'am', 'is', 'are', 'was', 'were', 'be', 'been', 'being', 'have', 'has', 'had',
  'having', 'do', 'does', 'did', 'doing', 'a', 'an', 'the', 'and', 'but', 'if', 'or', 'because', 'as',
  'until', 'while', 'of', 'at', 'by', 'for', 'with', 'about', 'against', 'between', 'into', 'through',
  'during', 'before', 'after', 'above', 'below', 'to', 'from', 'up', 'down', 'in', 'out', 'on', 'off',
  'over', 'under', 'again', 'further', 'then', 'once', 'here', 'there', 'when', 'where', 'why', 'how',
  'all', 'any', 'both', 'each', 'few', 'more', 'most', 'other', 'some', 'such', 'no', 'nor', 'not',
  'only', 'own', 'same', 'so', 'than', 'too', 'very', 'can', 'will', 'just', 'should', 'now',
  // fragments of contractions split at the apostrophe: don't → don + t, I'm → i + m, …
  's', 't', 'd', 'll', 'm', 're', 've', 'don', 'doesn', 'didn', 'isn', 'aren', 'wasn', 'weren',
  'haven', 'hasn', 'hadn', 'wouldn', 'shouldn', 'couldn', 'mustn',
]);
