/**
 * Leave-one-conversation-out selection, pure: given every choice's per-question scores on every
 * conversation, each conversation in turn is held out, the choice that scores best on the others
 * (all their questions pooled) is taken, and it is scored on the held-out one only. The held-out
 * scores, pooled, are what the tuned memory can be expected to do on a conversation it was not
 * tuned on; beside them, the choice tuned on all conversations (in-sample) shows the optimism.
 */
import { aggregate, type Aggregate, type QuestionScore } from './score.ts';

/** scores[choice][conversation]: the per-question scores of one choice on one conversation. */
export type ChoiceScores = readonly (readonly (readonly QuestionScore[])[])[];

export type HeldOut = Readonly<{
  conversation: number;
  /** The choice that scored best on the other conversations. */
  chosen: number;
  /** Its mean over the other conversations' questions, and over the held-out one's. */
  trained: number;
  heldOut: number;
}>;

export type LeaveOneOut = Readonly<{
  rounds: readonly HeldOut[];
  /** The held-out scores of every round, pooled. */
  pooled: Aggregate;
  /** The choice best over every conversation's questions, and its (in-sample) aggregate. */
  inSample: Readonly<{ chosen: number; aggregate: Aggregate }>;
}>;

const meanOf = (scores: readonly QuestionScore[]): number =>
  scores.length === 0 ? Number.NEGATIVE_INFINITY : scores.reduce((sum, s) => sum + s.recall, 0) / scores.length;

/** The choice with the best mean over the questions of `conversations`; the first such on a tie. */
const bestChoice = (scores: ChoiceScores, conversations: readonly number[]): { chosen: number; mean: number } => {
  let chosen = 0;
  let best = Number.NEGATIVE_INFINITY;
  for (const [choice, byConversation] of scores.entries()) {
    const mean = meanOf(conversations.flatMap((c) => byConversation[c]!));
    if (mean > best) {
      best = mean;
      chosen = choice;
    }
  }
  return { chosen, mean: best };
};

export const leaveOneOut = (scores: ChoiceScores): LeaveOneOut => {
  if (scores.length === 0) throw new RangeError('leaveOneOut: no choices to select from');
  const conversations = scores[0]!.length;
  if (conversations < 2) throw new RangeError(`leaveOneOut: needs at least two conversations, got ${conversations}`);
  if (scores.some((byConversation) => byConversation.length !== conversations)) {
    throw new RangeError('leaveOneOut: every choice needs scores for every conversation');
  }
  const all = Array.from({ length: conversations }, (_, c) => c);
  const rounds = all.map((held): HeldOut => {
    const { chosen, mean } = bestChoice(
      scores,
      all.filter((c) => c !== held),
    );
    return { conversation: held, chosen, trained: mean, heldOut: meanOf(scores[chosen]![held]!) };
  });
  const inSample = bestChoice(scores, all).chosen;
  return {
    rounds,
    pooled: aggregate(rounds.flatMap((r) => scores[r.chosen]![r.conversation]!)),
    inSample: { chosen: inSample, aggregate: aggregate(all.flatMap((c) => scores[inSample]![c]!)) },
  };
};
