/**
 * Reads one LoCoMo conversation file into ordered turns (virtual time from the session dates)
 * and scorable questions (categories 1–4 with evidence). Strict: anything unexpected throws a
 * LocomoDataError naming the file and the field; known quirks of the data are normalised and
 * reported as warnings.
 */
import { readFileSync } from 'node:fs';
import { basename } from 'node:path';
import type { LocomoTurn } from './recallSystem.ts';

export type LocomoCategory = 1 | 2 | 3 | 4;

export type LocomoQuestion = Readonly<{
  conversation: string;
  /** Index in the file's `qa` array, for pointing back at the source. */
  index: number;
  question: string;
  category: LocomoCategory;
  /** Distinct dia_ids of the turns that answer it; never empty. */
  evidence: readonly string[];
}>;

export type AdversarialQuestion = Readonly<{ conversation: string; index: number; question: string; evidence: readonly string[] }>;

export type LocomoConversation = Readonly<{
  name: string;
  file: string;
  speakers: readonly [string, string];
  turns: readonly LocomoTurn[];
  questions: readonly LocomoQuestion[];
  /** Category 5: questions whose premise is false (asked of the wrong person, say); `evidence` is the turn the premise twists. */
  adversarial: readonly AdversarialQuestion[];
  /** Questions of categories 1–4 dropped because no evidence was left. */
  droppedNoEvidence: number;
  /** Normalisations applied to the data (split, dropped or unknown evidence ids). */
  warnings: readonly string[];
}>;

/** The file is not a LoCoMo conversation as described in the data README. */
export class LocomoDataError extends Error {
  readonly code = 'LOCOMO_DATA_INVALID';
  constructor(
    readonly file: string,
    readonly field: string,
    problem: string,
    readonly value?: unknown,
  ) {
    const shown = value === undefined ? '' : `; got ${JSON.stringify(value)?.slice(0, 120)}`;
    super(`${file}: ${field}: ${problem}${shown}`);
    this.name = 'LocomoDataError';
  }
}

export const isLocomoDataError = (error: unknown): error is LocomoDataError => error instanceof LocomoDataError;

const MONTHS = [
  'January',
  'February',
  'March',
  'April',
  'May',
  'June',
  'July',
  'August',
  'September',
  'October',
  'November',
  'December',
] as const;

const DATE = /^(\d{1,2}):(\d{2}) (am|pm) on (\d{1,2}) ([A-Za-z]+), (\d{4})$/;

/**
 * Parses a session date such as "1:56 pm on 8 May, 2023" to epoch ms, read as UTC.
 * 12 am is midnight (hour 0), 12 pm is noon.
 *
 * @example
 * parseSessionDate('12:09 am on 13 September, 2023', 'conv-26.json', 'session_16_date_time')
 */
export const parseSessionDate = (text: unknown, file: string, field: string): number => {
  const fail = (problem: string): never => {
    throw new LocomoDataError(file, field, `${problem} (expected like "1:56 pm on 8 May, 2023")`, text);
  };
  if (typeof text !== 'string') return fail('not a string');
  const m = DATE.exec(text);
  if (!m) return fail('not a session date');
  const [, h, min, half, d, monthName, y] = m as unknown as [string, string, string, 'am' | 'pm', string, string, string];
  const hour12 = Number(h);
  const minute = Number(min);
  const day = Number(d);
  const year = Number(y);
  const month = MONTHS.indexOf(monthName as (typeof MONTHS)[number]);
  if (hour12 < 1 || hour12 > 12) fail(`hour ${hour12} is outside 1–12`);
  if (minute > 59) fail(`minute ${minute} is outside 0–59`);
  if (month < 0) fail(`unknown month '${monthName}'`);
  const hour = (hour12 % 12) + (half === 'pm' ? 12 : 0);
  const at = Date.UTC(year, month, day, hour, minute);
  if (day < 1 || new Date(at).getUTCDate() !== day) fail(`${monthName} ${year} has no day ${day}`);
  return at;
};

const DIA_ID = /^D(\d+):(\d+)$/;
const SESSION = /^session_(\d+)$/;

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Parses an already decoded conversation; `file` names it in errors and sets the conversation name. */
export const parseConversation = (raw: unknown, file: string): LocomoConversation => {
  const name = basename(file).replace(/\.json$/i, '');
  const fail = (field: string, problem: string, value?: unknown): never => {
    throw new LocomoDataError(file, field, problem, value);
  };
  const str = (v: unknown, field: string): string =>
    typeof v === 'string' && v !== '' ? v : fail(field, 'expected a non-empty string', v);
  if (!isRecord(raw)) return fail('(root)', 'expected a JSON object');
  const speakers = [str(raw.speaker_a, 'speaker_a'), str(raw.speaker_b, 'speaker_b')] as const;

  const sessions = Object.keys(raw)
    .map((key) => SESSION.exec(key))
    .filter((m): m is RegExpExecArray => m !== null)
    .map((m) => Number(m[1]))
    .sort((a, b) => a - b);
  if (sessions.length === 0) fail('session_N', 'no sessions found');

  const warnings: string[] = [];
  const turns: LocomoTurn[] = [];
  const seen = new Set<string>();
  let previousAt = Number.NEGATIVE_INFINITY;
  for (const session of sessions) {
    const field = `session_${session}`;
    const sessionAt = parseSessionDate(raw[`${field}_date_time`], file, `${field}_date_time`);
    const list = raw[field];
    if (!Array.isArray(list)) return fail(field, 'expected a list of turns', typeof list);
    if (sessionAt <= previousAt) warnings.push(`${field}: its date is not after the previous session's last turn`);
    for (const [i, turn] of (list as unknown[]).entries()) {
      const where = `${field}[${i}]`;
      if (!isRecord(turn)) return fail(where, 'expected a turn object', turn);
      const diaId = str(turn.dia_id, `${where}.dia_id`);
      const idMatch = DIA_ID.exec(diaId);
      if (!idMatch || Number(idMatch[1]) !== session) fail(`${where}.dia_id`, `expected D${session}:<n>`, diaId);
      if (seen.has(diaId)) fail(`${where}.dia_id`, 'duplicate dia_id', diaId);
      seen.add(diaId);
      if (typeof turn.text !== 'string') fail(`${where}.text`, 'expected a string', turn.text);
      const caption = turn.blip_caption;
      if (caption !== undefined && caption !== null && typeof caption !== 'string') {
        fail(`${where}.blip_caption`, 'expected a string', caption);
      }
      const at = sessionAt + i * 1000;
      turns.push({
        conversation: name,
        session,
        diaId,
        speaker: str(turn.speaker, `${where}.speaker`),
        text: turn.text as string,
        at,
        ...(typeof caption === 'string' && caption !== '' ? { imageCaption: caption } : {}),
      });
      previousAt = at;
    }
  }

  const qa = raw.qa;
  if (!Array.isArray(qa)) return fail('qa', 'expected a list of questions', typeof qa);
  const questions: LocomoQuestion[] = [];
  const adversarial: AdversarialQuestion[] = [];
  let droppedNoEvidence = 0;
  for (const [index, q] of (qa as unknown[]).entries()) {
    const where = `qa[${index}]`;
    if (!isRecord(q)) return fail(where, 'expected a question object', q);
    const category = q.category;
    if (typeof category !== 'number' || !Number.isInteger(category) || category < 1 || category > 5) {
      fail(`${where}.category`, 'expected an integer 1–5', category);
    }
    const question = str(q.question, `${where}.question`);
    if (!Array.isArray(q.evidence)) return fail(`${where}.evidence`, 'expected a list of dia_ids', q.evidence);
    // Category 5's warnings stay quiet: its evidence is only reported apart, never scored.
    const warn = category === 5 ? () => undefined : (line: string) => warnings.push(line);
    const evidence = new Set<string>();
    q.evidence.forEach((entry: unknown, e) => {
      if (typeof entry !== 'string') fail(`${where}.evidence[${e}]`, 'expected a string', entry);
      const parts = (entry as string)
        .split(/[;,]/)
        .map((s) => s.trim())
        .filter((s) => s !== '');
      if (parts.length > 1) warn(`${where}.evidence[${e}] ${JSON.stringify(entry)} split into ${parts.join(', ')}`);
      for (const part of parts) {
        if (!DIA_ID.test(part)) warn(`${where}.evidence[${e}] ${JSON.stringify(part)} is not a dia_id; dropped`);
        else if (!seen.has(part)) warn(`${where}.evidence[${e}] ${part} cites no turn of the conversation; dropped`);
        else evidence.add(part);
      }
    });
    if (category === 5) {
      if (evidence.size > 0) adversarial.push({ conversation: name, index, question, evidence: [...evidence] });
      continue;
    }
    if (evidence.size === 0) {
      droppedNoEvidence++;
      continue;
    }
    questions.push({ conversation: name, index, question, category: category as LocomoCategory, evidence: [...evidence] });
  }

  return { name, file, speakers, turns, questions, adversarial, droppedNoEvidence, warnings };
};

/** Reads and parses one conversation file. */
export const loadConversation = (file: string): LocomoConversation => {
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(file, 'utf8'));
  } catch (error) {
    throw new LocomoDataError(file, '(file)', `cannot read it as JSON: ${(error as Error).message}`);
  }
  return parseConversation(raw, file);
};
