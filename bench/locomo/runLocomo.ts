/**
 * `npm run bench:locomo -- --data DIR [--k 10] [--json FILE] [--only NAME]`: LoCoMo evidence
 * recall@k of the memory system against a BM25 baseline computed in the same run. Turns are fed
 * in order with their session dates as virtual time; no LLM is involved. Progress goes to stderr.
 */
import { runLocomoCli } from './locomoCli.ts';
import { writeFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { log } from '../measure.ts';
import { createBm25RecallSystem } from './bm25Baseline.ts';
import { ingestConversation } from './ingestConversation.ts';
import { conversationFiles } from './conversationFiles.ts';
import { loadConversation, type LocomoQuestion } from './locomoData.ts';
import { createMemoryRecallSystem } from './memorySystem.ts';
import type { RecallSystem } from './recallSystem.ts';
import { formatLocomoTable, toLocomoJson, type LocomoReport } from './report.ts';
import { aggregate, percentile, recallAtK, recallWithinTokens, type QuestionScore } from './score.ts';
import { positiveInt } from '../options.ts';

const HELP = `usage: npm run bench:locomo -- --data DIR [options]

For each LoCoMo conversation file (*.json) in DIR, feeds every turn to the memory system with the
session date as virtual time, then asks each question of categories 1-4 and scores evidence
recall@k against a BM25 baseline over the raw turns, computed in the same run.

options:
  --data DIR     directory of LoCoMo conversation files (required)
  --k N          evidence turns kept per question (default 10)
  --json FILE    also write { system, bm25, ingestMsPerTurn, recallLatencyMs } to FILE
  --only NAME    run only this conversation (file name without .json, e.g. conv-26)
  --help         show this text
`;

const parseOptions = (argv: string[]) => {
  const { values } = parseArgs({
    args: argv,
    options: {
      data: { type: 'string' },
      k: { type: 'string' },
      json: { type: 'string' },
      only: { type: 'string' },
      help: { type: 'boolean' },
    },
    strict: true,
  });
  const k = positiveInt('k', values.k, 10);
  return { help: values.help ?? false, data: values.data, k, json: values.json, only: values.only };
};

/** The extra depths reported beside recall@k, and the token budget, from one recall of DEEPEST items (more than a budget can hold). */
const DEPTHS = [5, 20] as const;
const DEEPEST = 100;
/** Recalled text a prompt can afford, in (estimated) tokens. */
const TOKEN_BUDGET = 2_000;

type Scores = { atK: QuestionScore[]; extra: Record<string, QuestionScore[]> };
const emptyScores = (): Scores => ({ atK: [], extra: Object.fromEntries(extraKeys().map((key) => [key, []])) });
const extraKeys = (): string[] => [...DEPTHS.map((d) => `recall@${d}`), `recall@${TOKEN_BUDGET}tokens`];

/** recall@k from a recall of k items (the headline, timed), and the extra depths and the token budget from one of DEEPEST. */
const ask = async (system: RecallSystem, q: LocomoQuestion, k: number, into: Scores, latencies?: number[]): Promise<void> => {
  const start = performance.now();
  const items = await system.recall(q.question, k);
  latencies?.push(performance.now() - start);
  into.atK.push({ category: q.category, recall: recallAtK(items, q.evidence, k) });
  const deep = await system.recall(q.question, DEEPEST);
  for (const depth of DEPTHS) into.extra[`recall@${depth}`]!.push({ category: q.category, recall: recallAtK(deep, q.evidence, depth) });
  into.extra[`recall@${TOKEN_BUDGET}tokens`]!.push({ category: q.category, recall: recallWithinTokens(deep, q.evidence, TOKEN_BUDGET) });
};

const run = async (files: readonly string[], k: number): Promise<LocomoReport> => {
  const began = performance.now();
  const systemScores = emptyScores();
  const bm25Scores = emptyScores();
  const latencies: number[] = [];
  /** Category 5, apart: how often each system's top k cites the turn the false premise twists. */
  const adversarial = { system: [] as number[], bm25: [] as number[] };
  const conversations: LocomoReport['conversations'][number][] = [];
  let ingestMs = 0;
  let bm25IngestMs = 0;
  let turns = 0;
  let systemName = '';
  let bm25Name = '';
  for (const file of files) {
    const conv = loadConversation(file);
    for (const w of conv.warnings) log(`${conv.name}: data: ${w}`);
    log(
      `${conv.name}: ${conv.turns.length} turns, ${conv.questions.length} questions (${conv.droppedNoEvidence} of categories 1-4 dropped: no evidence)`,
    );
    const system = await createMemoryRecallSystem(conv.name);
    const bm25 = await createBm25RecallSystem(conv.name);
    systemName = system.name;
    bm25Name = bm25.name;
    try {
      ingestMs += await ingestConversation(system, conv, 'system');
      bm25IngestMs += await ingestConversation(bm25, conv, 'bm25');
      turns += conv.turns.length;
      log(`${conv.name}: ${conv.turns.length} turns ingested; asking ${conv.questions.length} questions`);
      const own = emptyScores();
      const ownBm25 = emptyScores();
      for (const q of conv.questions) {
        await ask(system, q, k, own, latencies);
        await ask(bm25, q, k, ownBm25);
      }
      for (const q of conv.adversarial) {
        adversarial.system.push(recallAtK(await system.recall(q.question, k), q.evidence, k));
        adversarial.bm25.push(recallAtK(await bm25.recall(q.question, k), q.evidence, k));
      }
      for (const [all, mine] of [
        [systemScores, own],
        [bm25Scores, ownBm25],
      ] as const) {
        all.atK.push(...mine.atK);
        for (const key of extraKeys()) all.extra[key]!.push(...mine.extra[key]!);
      }
      conversations.push({
        name: conv.name,
        turns: conv.turns.length,
        questions: conv.questions.length,
        system: aggregate(own.atK).overall.mean,
        bm25: aggregate(ownBm25.atK).overall.mean,
      });
    } finally {
      await system.close();
      await bm25.close();
    }
  }
  return {
    k,
    systemName,
    bm25Name,
    conversations,
    system: aggregate(systemScores.atK),
    bm25: aggregate(bm25Scores.atK),
    extra: Object.fromEntries(
      extraKeys().map((key) => [key, { system: aggregate(systemScores.extra[key]!), bm25: aggregate(bm25Scores.extra[key]!) }]),
    ),
    adversarial: {
      questions: adversarial.system.length,
      system: adversarial.system.reduce((a, b) => a + b, 0) / Math.max(1, adversarial.system.length),
      bm25: adversarial.bm25.reduce((a, b) => a + b, 0) / Math.max(1, adversarial.bm25.length),
    },
    ingestMsPerTurn: ingestMs / turns,
    bm25IngestMsPerTurn: bm25IngestMs / turns,
    recallLatencyMs: { p50: percentile(latencies, 50), p99: percentile(latencies, 99), calls: latencies.length },
    elapsedMs: performance.now() - began,
  };
};

process.exitCode = await runLocomoCli('bench:locomo', HELP, parseOptions, async (options) => {
  const report = await run(conversationFiles(options.data, options.only), options.k);
  if (options.json !== undefined) {
    writeFileSync(options.json, `${JSON.stringify(toLocomoJson(report), null, 2)}\n`);
    log(`wrote ${options.json}`);
  }
  return `${formatLocomoTable(report)}\n`;
});
