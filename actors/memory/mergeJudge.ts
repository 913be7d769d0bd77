/**
 * Who decides whether two similar entities are one: a model, asked with the names and what the
 * graph says about each. Its answer is recorded (`MergeDecided`) before it is applied, like
 * every other model answer, so replay never asks again.
 */
import type { ModelChain } from '../llm/llmFacility.ts';

export type MergeVerdict = Readonly<{ decision: 'merge' | 'keep'; reason: string }>;

export type MergeJudge = (
  a: string,
  b: string,
  evidence: Readonly<{ a: readonly string[]; b: readonly string[] }>,
) => Promise<MergeVerdict>;

const PROMPT = (a: string, b: string, evidence: { a: readonly string[]; b: readonly string[] }) =>
  [
    `Are "${a}" and "${b}" the same entity in this memory?`,
    `What is known about "${a}":`,
    ...evidence.a.slice(0, 8).map((s) => `- ${s}`),
    `What is known about "${b}":`,
    ...evidence.b.slice(0, 8).map((s) => `- ${s}`),
    'Answer with one word, "merge" or "keep", then a short reason on the same line.',
  ].join('\n');

/** Reads the model's answer; anything but a clear "merge" keeps both (merging is the irreversible one). */
export const parseVerdict = (text: string): MergeVerdict => {
  const trimmed = text.trim();
  const first =
    trimmed
      .split(/\s+/)[0]
      ?.toLowerCase()
      .replace(/[^a-z]/g, '') ?? '';
  return { decision: first === 'merge' || first === 'yes' ? 'merge' : 'keep', reason: trimmed.slice(0, 300) };
};

export type RelationVerdict = Readonly<{ verdict: 'keep' | 'drop'; reason: string }>;

/** Is the relation supported by the sentence it came from? */
export type RelationJudge = (
  relation: Readonly<{ relationId: string; subject: string; predicate: string; object: string; sentence: string }>,
) => Promise<RelationVerdict>;

/** Anything but a clear "drop" keeps the relation (dropping is the irreversible one). */
export const parseRelationVerdict = (text: string): RelationVerdict => {
  const trimmed = text.trim();
  const first =
    trimmed
      .split(/\s+/)[0]
      ?.toLowerCase()
      .replace(/[^a-z]/g, '') ?? '';
  return { verdict: first === 'drop' ? 'drop' : 'keep', reason: trimmed.slice(0, 300) };
};

export const llmRelationJudge =
  (chain: ModelChain, model: string): RelationJudge =>
  async (r) => {
    const content = [
      `Sentence: "${r.sentence}"`,
      `Stored fact: (${r.subject}) —${r.predicate}→ (${r.object})`,
      'Does the sentence support the stored fact? Answer with one word, "keep" or "drop", then a short reason on the same line.',
    ].join('\n');
    const answer = await chain.complete({ model, messages: [{ role: 'user', content }], tools: [], stream: false });
    return parseRelationVerdict(answer.text);
  };

export const llmMergeJudge =
  (chain: ModelChain, model: string): MergeJudge =>
  async (a, b, evidence) => {
    const answer = await chain.complete({ model, messages: [{ role: 'user', content: PROMPT(a, b, evidence) }], tools: [], stream: false });
    return parseVerdict(answer.text);
  };
