/**
 * `npm run bench:locomo:loo -- [--data DIR] [--json FILE]`: LoCoMo evidence recall@10 of the
 * memory with every tuned choice picked leave-one-conversation-out. The choices are the ones
 * tuned on these conversations: the index's (the lexicon, the neighbours' weights, whether a pause
 * ends who is whose neighbour) and recall's
 * (how much the person asked about, the days named and a when-question count). Each conversation
 * is held out in turn, the combination best on the others is picked and scored on it alone; the
 * pooled held-out scores are set beside the combination best on all of them (in-sample), the
 * shipped defaults and BM25 of the same run. Progress goes to stderr.
 */
import { runLocomoCli } from './locomoCli.ts';
import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import type { MemoryConfig } from '../../actors/memory/openMemory.ts';
import { RECALL_BOOSTS, type RecallBoosts } from '../../projections/index.ts';
import { UsageError } from '../options.ts';
import { createBm25RecallSystem } from './bm25Baseline.ts';
import { ingestConversation } from './ingestConversation.ts';
import { conversationFiles } from './conversationFiles.ts';
import { leaveOneOut, type LeaveOneOut } from './leaveOneOut.ts';
import { loadConversation, type LocomoConversation } from './locomoData.ts';
import { createMemoryRecallSystem } from './memorySystem.ts';
import { aggregate, recallAtK, recallWithinTokens, type Aggregate, type QuestionScore } from './score.ts';

const DEFAULT_DATA = fileURLToPath(new URL('../../../shared/data/locomo', import.meta.url));
const K = 10;
const DEEPEST = 100;
const TOKEN_BUDGET = 2_000;
const TARGETS = { overall: 0.85, category: 0.55 } as const;

type IndexVariant = Readonly<{ name: string; config: Partial<MemoryConfig> }>;

/** Neighbours across any pause, as before the pause (NEIGHBOUR_PAUSE_MS, 1 h) was shipped. */
const NO_PAUSE = Number.POSITIVE_INFINITY;

/** The index's tuned choices; the shipped one first, so a tie keeps it. */
const INDEX_VARIANTS: readonly IndexVariant[] = [
  { name: 'wordnet, neighbours 4,2 | 1,1 within a 1 h pause', config: {} },
  { name: 'wordnet, neighbours 4,2 | 1,1', config: { neighbourPauseMs: NO_PAUSE } },
  { name: 'wordnet, neighbours 2,1 | 1', config: { neighbourWeights: { before: [2, 1], after: [1] }, neighbourPauseMs: NO_PAUSE } },
  { name: 'wordnet, no neighbours', config: { neighbourWeights: { before: [], after: [] } } },
  { name: 'no lexicon, neighbours 4,2 | 1,1', config: { lexicon: 'none', neighbourPauseMs: NO_PAUSE } },
  { name: 'no lexicon, neighbours 4,2 | 1,1 within a 1 h pause', config: { lexicon: 'none' } },
];

/** Recall's tuned choices: the shipped boosts first, then every other point of the grid. */
const BOOSTS: readonly RecallBoosts[] = (() => {
  const grid = [0, 0.5, 1].flatMap((person) =>
    [0, 1, 2].flatMap((time) => [0, 0.5, 1].map((when) => ({ person, time, when, scene: RECALL_BOOSTS.scene }))),
  );
  const same = (a: RecallBoosts, b: RecallBoosts) => a.person === b.person && a.time === b.time && a.when === b.when;
  return [RECALL_BOOSTS, ...grid.filter((b) => !same(b, RECALL_BOOSTS))];
})();

type Choice = Readonly<{ variant: number; boosts: number }>;
const CHOICES: readonly Choice[] = INDEX_VARIANTS.flatMap((_, variant) => BOOSTS.map((_, boosts) => ({ variant, boosts })));

const describeChoice = ({ variant, boosts }: Choice): string => {
  const b = BOOSTS[boosts]!;
  return `${INDEX_VARIANTS[variant]!.name}; boosts person ${b.person}, time ${b.time}, when ${b.when}`;
};

const HELP = `usage: npm run bench:locomo:loo -- [options]

LoCoMo evidence recall@${K} with every tuned choice picked leave-one-conversation-out: for each
conversation in DIR, the combination of index choices (${INDEX_VARIANTS.length}: lexicon, neighbour weights and pause) and
recall boosts (${BOOSTS.length}: person, time, when) best on the other conversations is scored on it.
Reports the pooled held-out figure by category beside the in-sample best, the shipped defaults
and BM25 of the same run, and recall@${K} within ${TOKEN_BUDGET} tokens of the held-out choices. Targets
(issue "Memory at scale"): overall >= ${TARGETS.overall}, no category below ${TARGETS.category}, above BM25 in every category.

options:
  --data DIR     LoCoMo conversation files, at least two (default ${DEFAULT_DATA})
  --json FILE    also write the figures as JSON to FILE
  --help         show this text
`;

const parseOptions = (argv: string[]) => {
  const { values } = parseArgs({
    args: argv,
    options: { data: { type: 'string' }, json: { type: 'string' }, help: { type: 'boolean' } },
    strict: true,
  });
  return { help: values.help ?? false, data: values.data ?? DEFAULT_DATA, json: values.json };
};

/** Every choice's recall@K on one conversation: one ingest per index variant, every boost setting asked of it. */
const scoreConversation = async (conv: LocomoConversation): Promise<QuestionScore[][]> => {
  const byChoice: QuestionScore[][] = CHOICES.map(() => []);
  for (const [variant, { name, config }] of INDEX_VARIANTS.entries()) {
    const system = await createMemoryRecallSystem(conv.name, config);
    try {
      await ingestConversation(system, conv, name);
      for (const [boosts, b] of BOOSTS.entries()) {
        const into = byChoice[CHOICES.findIndex((c) => c.variant === variant && c.boosts === boosts)]!;
        for (const q of conv.questions) {
          into.push({ category: q.category, recall: recallAtK(await system.recallWith(q.question, K, b), q.evidence, K) });
        }
      }
    } finally {
      await system.close();
    }
  }
  return byChoice;
};

/** recall@K within TOKEN_BUDGET tokens on `conv` for `choice`, from one recall of DEEPEST items per question. */
const withinBudget = async (conv: LocomoConversation, choice: Choice): Promise<QuestionScore[]> => {
  const system = await createMemoryRecallSystem(conv.name, INDEX_VARIANTS[choice.variant]!.config);
  try {
    await ingestConversation(system, conv, INDEX_VARIANTS[choice.variant]!.name);
    const out: QuestionScore[] = [];
    for (const q of conv.questions) {
      const deep = await system.recallWith(q.question, DEEPEST, BOOSTS[choice.boosts]!);
      out.push({ category: q.category, recall: recallWithinTokens(deep, q.evidence, TOKEN_BUDGET) });
    }
    return out;
  } finally {
    await system.close();
  }
};

const bm25Scores = async (conv: LocomoConversation): Promise<QuestionScore[]> => {
  const system = await createBm25RecallSystem(conv.name);
  try {
    await ingestConversation(system, conv, 'bm25');
    const out: QuestionScore[] = [];
    for (const q of conv.questions)
      out.push({ category: q.category, recall: recallAtK(await system.recall(q.question, K), q.evidence, K) });
    return out;
  } finally {
    await system.close();
  }
};

type Report = Readonly<{
  conversations: readonly string[];
  result: LeaveOneOut;
  shipped: Aggregate;
  bm25: Aggregate;
  budget: Aggregate;
}>;

const measure = async (files: readonly string[]): Promise<Report> => {
  const conversations = files.map(loadConversation);
  if (conversations.length < 2) throw new UsageError('leave-one-out needs at least two conversation files');
  const scores: QuestionScore[][][] = CHOICES.map(() => []);
  const bm25: QuestionScore[] = [];
  for (const conv of conversations) {
    for (const [choice, questions] of (await scoreConversation(conv)).entries()) scores[choice]!.push(questions);
    bm25.push(...(await bm25Scores(conv)));
  }
  const result = leaveOneOut(scores);
  const budget: QuestionScore[] = [];
  for (const round of result.rounds) budget.push(...(await withinBudget(conversations[round.conversation]!, CHOICES[round.chosen]!)));
  return {
    conversations: conversations.map((c) => c.name),
    result,
    shipped: aggregate(scores[0]!.flat()),
    bm25: aggregate(bm25),
    budget: aggregate(budget),
  };
};

const fixed = (x: number | undefined): string => (x === undefined || Number.isNaN(x) ? '-' : x.toFixed(4));

const format = (report: Report): string => {
  const { result, shipped, bm25, budget } = report;
  const categories = Object.keys(result.pooled.byCategory);
  const lines = [
    `leave-one-conversation-out over ${report.conversations.length} conversations, ${CHOICES.length} combinations of tuned choices`,
    '',
    'held out    trained  held out  chosen on the others',
    ...result.rounds.map(
      (r) =>
        `${report.conversations[r.conversation]!.padEnd(10)}  ${fixed(r.trained)}   ${fixed(r.heldOut)}    ${describeChoice(CHOICES[r.chosen]!)}`,
    ),
    '',
    `recall@${K}     held out  in-sample  shipped   bm25     held out within ${TOKEN_BUDGET} tokens`,
    ...[...categories.map((c) => [`category ${c}`, c] as const), ['overall', undefined] as const].map(([label, c]) => {
      const at = (a: Aggregate) => (c === undefined ? a.overall.mean : a.byCategory[c]?.mean);
      return `${label.padEnd(12)}  ${fixed(at(result.pooled))}    ${fixed(at(result.inSample.aggregate))}     ${fixed(at(shipped))}   ${fixed(at(bm25))}   ${fixed(at(budget))}`;
    }),
    `in-sample best: ${describeChoice(CHOICES[result.inSample.chosen]!)}; shipped: ${describeChoice(CHOICES[0]!)}`,
    '',
    'targets (held out):',
    `  ${result.pooled.overall.mean >= TARGETS.overall ? 'met   ' : 'missed'}  overall at least ${TARGETS.overall}`,
    `  ${categories.every((c) => result.pooled.byCategory[c]!.mean >= TARGETS.category) ? 'met   ' : 'missed'}  no category below ${TARGETS.category}`,
    `  ${categories.every((c) => result.pooled.byCategory[c]!.mean > (bm25.byCategory[c]?.mean ?? 1)) ? 'met   ' : 'missed'}  above BM25 in every category`,
  ];
  return `${lines.join('\n')}\n`;
};

process.exitCode = await runLocomoCli('bench:locomo:loo', HELP, parseOptions, async (options) => {
  const report = await measure(conversationFiles(options.data, undefined));
  if (options.json) {
    const json = { ...report, rounds: report.result.rounds.map((r) => ({ ...r, chosen: describeChoice(CHOICES[r.chosen]!) })) };
    writeFileSync(options.json, `${JSON.stringify(json, null, 2)}\n`);
  }
  return format(report);
});
