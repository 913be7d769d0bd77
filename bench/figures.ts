/** A benchmark figure (value vs its in-process baseline) and its two outputs: a table and JSON. */

export type Figure = Readonly<{
  name: string;
  /** What the code under test achieved. */
  value: number;
  /** What the raw baseline achieved on the same work, in the same process. */
  baseline: number;
  /** value / baseline, as the median of paired rounds when measured so; higher is better unless the unit says lower is. */
  ratio: number;
  unit: string;
  /** Minimum ratio we aim for, when there is one. */
  target?: number;
  /** Maximum ratio we accept, for a figure where lower is better. */
  targetMax?: number;
  /** How the figure was measured (repetitions, sizes), for the table only. */
  note?: string;
}>;

export const makeFigure = (
  name: string,
  unit: string,
  value: number,
  baseline: number,
  extra: { target?: number; targetMax?: number; note?: string; ratio?: number } = {},
): Figure => ({ name, unit, value, baseline, ...extra, ratio: extra.ratio ?? value / baseline });

export const belowTarget = (f: Figure): boolean => f.target !== undefined && f.ratio < f.target;

export const aboveTargetMax = (f: Figure): boolean => f.targetMax !== undefined && f.ratio > f.targetMax;

const missesTarget = (f: Figure): boolean => belowTarget(f) || aboveTargetMax(f);

const targetText = (f: Figure): string =>
  f.target !== undefined ? `>= ${f.target}` : f.targetMax !== undefined ? `<= ${f.targetMax}` : '-';

const status = (f: Figure): string => {
  if (belowTarget(f)) return 'below target';
  if (aboveTargetMax(f)) return 'above target';
  return f.target === undefined && f.targetMax === undefined ? '' : 'ok';
};

const count = new Intl.NumberFormat('en-US', { maximumFractionDigits: 0 });
const small = new Intl.NumberFormat('en-US', { maximumSignificantDigits: 3 });
// Rates are whole numbers; a value under 100 (ms, events per turn) keeps three digits so a sub-ms time is not 0.
const isSmall = (v: number): boolean => Math.abs(v) < 100;
const fmtValue = (v: number): string => (isSmall(v) ? small.format(v) : count.format(v));
const roundValue = (v: number): number => (isSmall(v) ? Number(v.toPrecision(3)) : Math.round(v));
const fmtRatio = (r: number): string => (r >= 10 ? r.toFixed(1) : r.toFixed(2));

/** A plain-text table, one row per figure, with targets and misses spelled out. */
export const formatTable = (figures: readonly Figure[]): string => {
  const header = ['figure', 'value', 'baseline', 'ratio', 'target', 'unit', 'status'];
  const rows = figures.map((f) => [f.name, fmtValue(f.value), fmtValue(f.baseline), fmtRatio(f.ratio), targetText(f), f.unit, status(f)]);
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const numeric = new Set([1, 2, 3]);
  const line = (cells: readonly string[]): string =>
    cells
      .map((c, i) => (numeric.has(i) ? c.padStart(widths[i]!) : c.padEnd(widths[i]!)))
      .join('  ')
      .trimEnd();
  const out = [line(header), line(widths.map((w) => '-'.repeat(w))), ...rows.map(line), ''];
  out.push(
    'ratio = median over rounds of value / baseline (higher is better unless the unit says lower is); baseline and value alternate in one process.',
  );
  for (const f of figures) if (f.note) out.push(`  ${f.name}: ${f.note}`);
  const misses = figures.filter(missesTarget);
  out.push(
    misses.length === 0
      ? 'every figure with a target meets it.'
      : `target missed: ${misses.map((f) => `${f.name} (${fmtRatio(f.ratio)}, target ${targetText(f)})`).join(', ')}`,
  );
  return out.join('\n');
};

/** `{ "<figure>": { value, baseline, ratio, unit } }`: the shape tracked run to run. */
export const toJson = (figures: readonly Figure[]): Record<string, { value: number; baseline: number; ratio: number; unit: string }> =>
  Object.fromEntries(
    figures.map((f) => [
      f.name,
      { value: roundValue(f.value), baseline: roundValue(f.baseline), ratio: Number(f.ratio.toFixed(4)), unit: f.unit },
    ]),
  );
