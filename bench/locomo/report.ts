/** The LoCoMo run's result and its two outputs: a plain-text table and the JSON compared run to run. */
import type { Aggregate } from './score.ts';

export type LocomoReport = Readonly<{
  k: number;
  systemName: string;
  bm25Name: string;
  conversations: readonly Readonly<{ name: string; turns: number; questions: number; system: number; bm25: number }>[];
  system: Aggregate;
  bm25: Aggregate;
  /** The other measures, by name (`recall@5`, `recall@20`, `recall@2000tokens`), for both systems. */
  extra: Readonly<Record<string, Readonly<{ system: Aggregate; bm25: Aggregate }>>>;
  /** Category 5 (a false premise), not scored: the share of the twisted turn found in the top k, for each system. */
  adversarial: Readonly<{ questions: number; system: number; bm25: number }>;
  /** System ingest wall time (every ingest call plus finishIngest) per turn. */
  ingestMsPerTurn: number;
  bm25IngestMsPerTurn: number;
  /** Wall time around each system `recall` call. */
  recallLatencyMs: Readonly<{ p50: number; p99: number; calls: number }>;
  elapsedMs: number;
}>;

const round = (n: number, digits = 4): number => Number(n.toFixed(digits));

type Side = { overall: Record<string, number>; byCategory: Record<string, Record<string, number>> };

const side = (a: Aggregate, key: string): Side => ({
  overall: { [key]: round(a.overall.mean) },
  byCategory: Object.fromEntries(Object.entries(a.byCategory).map(([c, m]) => [c, { [key]: round(m.mean) }])),
});

/** `{ system, bm25, ingestMsPerTurn, recallLatencyMs: { p50, p99 } }` with recall under "recall@K". */
/** Two sides of one system merged: `{ overall: { a, b }, byCategory: { '1': { a, b } } }`. */
const merged = (sides: readonly Side[]): Side => ({
  overall: Object.assign({}, ...sides.map((s) => s.overall)),
  byCategory: Object.fromEntries(
    [...new Set(sides.flatMap((s) => Object.keys(s.byCategory)))].map((c) => [
      c,
      Object.assign({}, ...sides.map((s) => s.byCategory[c] ?? {})),
    ]),
  ),
});

export const toLocomoJson = (r: LocomoReport) => {
  const key = `recall@${r.k}`;
  const extra = Object.entries(r.extra);
  return {
    system: merged([side(r.system, key), ...extra.map(([name, e]) => side(e.system, name))]),
    bm25: merged([side(r.bm25, key), ...extra.map(([name, e]) => side(e.bm25, name))]),
    adversarial: { questions: r.adversarial.questions, system: round(r.adversarial.system), bm25: round(r.adversarial.bm25) },
    ingestMsPerTurn: round(r.ingestMsPerTurn, 3),
    recallLatencyMs: { p50: round(r.recallLatencyMs.p50, 3), p99: round(r.recallLatencyMs.p99, 3) },
  };
};

const table = (header: readonly string[], rows: readonly (readonly string[])[]): string[] => {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (cells: readonly string[]): string =>
    cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('  ');
  return [line(header), line(widths.map((w) => '-'.repeat(w))), ...rows.map(line)];
};

const f4 = (n: number): string => (Number.isNaN(n) ? '-' : n.toFixed(4));
const ms = (n: number): string => (n >= 100 ? n.toFixed(0) : n >= 1 ? n.toFixed(2) : n.toFixed(3));

/** The run as a table: recall per category and overall for both systems, then the timings. */
export const formatLocomoTable = (r: LocomoReport): string => {
  const at = `recall@${r.k}`;
  const categories = [...new Set([...Object.keys(r.system.byCategory), ...Object.keys(r.bm25.byCategory)])].sort();
  const rows = categories.map((c) => {
    const s = r.system.byCategory[c];
    const b = r.bm25.byCategory[c];
    return [`category ${c}`, String(s?.count ?? b?.count ?? 0), f4(s?.mean ?? Number.NaN), f4(b?.mean ?? Number.NaN)];
  });
  rows.push(['overall', String(r.system.overall.count), f4(r.system.overall.mean), f4(r.bm25.overall.mean)]);
  const turns = r.conversations.reduce((n, c) => n + c.turns, 0);
  const out = [
    `LoCoMo evidence ${at}: ${r.conversations.length} conversation(s), ${turns} turns, ${r.system.overall.count} questions (categories 1-4 with evidence)`,
    '',
    ...table(['', 'questions', `system ${at}`, `bm25 ${at}`], rows),
    '',
    'overall = mean over all questions (not the mean of the category means); categories by their number in the data.',
    `${at}: recalled items flattened in rank order into the dia_ids they cite, first ${r.k} distinct kept, share of evidence turns among them.`,
    '',
    ...table(
      ['', ...Object.keys(r.extra).flatMap((name) => [`system ${name}`, `bm25 ${name}`])],
      [...categories, 'overall'].map((c) => [
        c === 'overall' ? 'overall' : `category ${c}`,
        ...Object.values(r.extra).flatMap((e) =>
          c === 'overall'
            ? [f4(e.system.overall.mean), f4(e.bm25.overall.mean)]
            : [f4(e.system.byCategory[c]?.mean ?? Number.NaN), f4(e.bm25.byCategory[c]?.mean ?? Number.NaN)],
        ),
      ]),
    ),
    'recall@5, @20 and @2000tokens from one recall of 100 items; @2000tokens: the evidence cited by the items that fit, in rank order, within 2,000 tokens of recalled text (tokens estimated as a quarter of its characters).',
    '',
    `category 5 (adversarial, apart, not scored): ${r.adversarial.questions} questions whose premise is false (asked of the wrong person, say);`,
    `  their top ${r.k} cite the turn the premise twists: system ${f4(r.adversarial.system)}, bm25 ${f4(r.adversarial.bm25)}`,
    '  (the material an answer needs to correct the premise, and could be misled by; the memory has no "not there" signal yet).',
    '',
    ...table(
      ['conversation', 'turns', 'questions', `system ${at}`, `bm25 ${at}`],
      r.conversations.map((c) => [c.name, String(c.turns), String(c.questions), f4(c.system), f4(c.bm25)]),
    ),
    '',
    `system: ${r.systemName}`,
    `bm25:   ${r.bm25Name}`,
    `ingest: system ${ms(r.ingestMsPerTurn)} ms/turn (ingest calls + finishIngest); bm25 ${ms(r.bm25IngestMsPerTurn)} ms/turn`,
    `recall latency (system, around recall): p50 ${ms(r.recallLatencyMs.p50)} ms, p99 ${ms(r.recallLatencyMs.p99)} ms over ${r.recallLatencyMs.calls} calls`,
    `run time: ${(r.elapsedMs / 1000).toFixed(1)} s`,
  ];
  return out.join('\n');
};
