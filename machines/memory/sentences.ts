/** Splits text into sentences with their offsets, so every fact can point back at its source. Pure. */

export type Sentence = Readonly<{
  /** The sentence as written, terminator included, surrounding whitespace trimmed. */
  text: string;
  /** The sentence without its terminator: what the patterns read. */
  body: string;
  /** `[start, end)` offsets in the original text: `original.slice(start, end) === text`. */
  span: readonly [number, number];
  /** Ends in ? or ？, or (Chinese) in the question particle 吗/么. */
  question: boolean;
}>;

const HARD_STOPS = new Set(['。', '！', '？', '!', '?', '\n', '\r', '…']);

/** A `.` ends a sentence only before whitespace or the end, so 3.5 and example.com stay whole. */
const endsAt = (text: string, i: number): boolean => {
  const char = text[i] ?? '';
  if (HARD_STOPS.has(char)) return true;
  return char === '.' && (i + 1 >= text.length || /\s/.test(text[i + 1] ?? ''));
};

const QUESTION_START =
  /^(?:do|does|did|can|could|would|will|should|shall|is|are|am|was|were|have|has|where|what|who|whom|why|how|when|which)\b/i;

/**
 * Sentences of `text`, in order. Runs of terminators (`?!`, `……`) stay with their sentence.
 *
 * @example splitSentences('I live in Paris. 我喜欢猫！').map((s) => s.text) // ['I live in Paris.', '我喜欢猫！']
 */
export const splitSentences = (text: string): Sentence[] => {
  const out: Sentence[] = [];
  let start = 0;
  let i = 0;
  while (i <= text.length) {
    if (i < text.length && !endsAt(text, i)) {
      i += 1;
      continue;
    }
    let end = i;
    while (end < text.length && endsAt(text, end)) end += 1;
    push(out, text, start, i, end);
    start = end;
    i = end === i ? i + 1 : end;
  }
  return out;
};

const push = (out: Sentence[], text: string, start: number, bodyEnd: number, end: number): void => {
  const raw = text.slice(start, bodyEnd);
  const lead = raw.length - raw.trimStart().length;
  const body = raw.trim();
  if (body === '') return;
  const terminator = text.slice(bodyEnd, end);
  const from = start + lead;
  const sentenceText = text.slice(from, end).trimEnd();
  const question = /[?？]/.test(terminator) || /[吗么][\s"'”」]*$/u.test(body) || QUESTION_START.test(body);
  out.push({ text: sentenceText, body, span: [from, from + sentenceText.length], question });
};
