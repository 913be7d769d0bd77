/**
 * Scene fingerprints: five weighted features of a turn (channel 1.0, peer 1.0, tools 0.8,
 * topic 0.4, time of day 0.2) and their similarity. Pure: time comes in as milliseconds.
 */
import { HologramError } from '../../events/index.ts';

export type TimeOfDay = 'night' | 'morning' | 'afternoon' | 'evening';
export const TIMES_OF_DAY: readonly TimeOfDay[] = ['night', 'morning', 'afternoon', 'evening'];

/** Features of a scene or a turn. An absent (undefined or empty) feature is not compared. */
export type SceneFeatures = Readonly<{
  channel?: string;
  peer?: string;
  /** Sorted, distinct tool names. */
  tools: readonly string[];
  /** Sorted, distinct, normalised (NFKC, lower case) keywords. */
  topic: readonly string[];
  timeOfDay?: TimeOfDay;
}>;

export const SCENE_WEIGHTS = { channel: 1.0, peer: 1.0, tools: 0.8, topic: 0.4, timeOfDay: 0.2 } as const;

export type TurnDescription = Readonly<{
  channel?: string;
  peer?: string;
  tools?: readonly string[];
  topic?: readonly string[];
  /** Epoch milliseconds. */
  at: number;
  /** Offset of the user's local time from UTC, in minutes (UTC+8 is 480). Default 0. */
  utcOffsetMinutes?: number;
}>;

const HOUR_MS = 3_600_000;
const DAY_MS = 24 * HOUR_MS;

/** Local hour → bucket: night [0, 6), morning [6, 12), afternoon [12, 18), evening [18, 24). */
export const timeOfDayOf = (at: number, utcOffsetMinutes = 0): TimeOfDay => {
  const local = (((at + utcOffsetMinutes * 60_000) % DAY_MS) + DAY_MS) % DAY_MS;
  const hour = Math.floor(local / HOUR_MS);
  return hour < 6 ? 'night' : hour < 12 ? 'morning' : hour < 18 ? 'afternoon' : 'evening';
};

const distinctSorted = (values: readonly string[], normalise: (v: string) => string): string[] =>
  [...new Set(values.map(normalise).filter((v) => v !== ''))].sort((x, y) => (x < y ? -1 : x > y ? 1 : 0));

const keyword = (word: string): string => word.normalize('NFKC').toLowerCase().trim();
const text = (value: string | undefined): string | undefined => {
  const trimmed = value?.trim();
  return trimmed ? trimmed : undefined;
};

/** Assemble features, leaving absent optional ones out (exactOptionalPropertyTypes-safe). */
const features = (parts: {
  channel?: string | undefined;
  peer?: string | undefined;
  tools: string[];
  topic: string[];
  timeOfDay?: TimeOfDay | undefined;
}): SceneFeatures => ({
  ...(parts.channel !== undefined ? { channel: parts.channel } : {}),
  ...(parts.peer !== undefined ? { peer: parts.peer } : {}),
  tools: parts.tools,
  topic: parts.topic,
  ...(parts.timeOfDay !== undefined ? { timeOfDay: parts.timeOfDay } : {}),
});

/**
 * The fingerprint of a turn. Channel and peer are trimmed (exact, case-sensitive afterwards);
 * tools are deduplicated and sorted; topic keywords are NFKC-lowercased, deduplicated and sorted.
 *
 * @example fingerprintOf({ channel: 'qq', peer: 'group_1', tools: ['search'], topic: ['Go'], at: 0 })
 * // { channel: 'qq', peer: 'group_1', tools: ['search'], topic: ['go'], timeOfDay: 'night' }
 */
export const fingerprintOf = (turn: TurnDescription): SceneFeatures =>
  features({
    channel: text(turn.channel),
    peer: text(turn.peer),
    tools: distinctSorted(turn.tools ?? [], (t) => t.trim()),
    topic: distinctSorted(turn.topic ?? [], keyword),
    timeOfDay: timeOfDayOf(turn.at, turn.utcOffsetMinutes ?? 0),
  });

const jaccard = (x: readonly string[], y: readonly string[]): number => {
  const left = new Set(x);
  const right = new Set(y);
  let shared = 0;
  for (const v of left) if (right.has(v)) shared += 1;
  const union = left.size + right.size - shared;
  return union === 0 ? 0 : shared / union;
};

/**
 * Weighted overlap of two fingerprints, in [0, 1]:
 *
 *   Σ w_f · match_f / Σ w_f, both sums over the features present in EITHER fingerprint,
 *
 * where a feature is present when defined (channel, peer, timeOfDay) or non-empty (tools, topic);
 * match is 1/0 for exact equality of channel, peer and timeOfDay, and the Jaccard index for tools
 * and topic; a feature present on one side only matches 0. No feature present on either side: 0.
 * The result is rounded to 12 decimals so that exact ratios meet the spec's thresholds exactly
 * (0.8 · 0.35 / 0.8 would otherwise read 0.34999…).
 * So a declared scene that only knows channel and peer scores (1 + 1) / 3.4 ≈ 0.59 against a full
 * turn of its channel and peer, never close to 1.0.
 */
export const similarity = (f1: SceneFeatures, f2: SceneFeatures): number => {
  let weight = 0;
  let score = 0;
  const exact = (w: number, x: string | undefined, y: string | undefined) => {
    if (x === undefined && y === undefined) return;
    weight += w;
    if (x === y) score += w;
  };
  const sets = (w: number, x: readonly string[], y: readonly string[]) => {
    if (x.length === 0 && y.length === 0) return;
    weight += w;
    score += w * jaccard(x, y);
  };
  exact(SCENE_WEIGHTS.channel, f1.channel, f2.channel);
  exact(SCENE_WEIGHTS.peer, f1.peer, f2.peer);
  sets(SCENE_WEIGHTS.tools, f1.tools, f2.tools);
  sets(SCENE_WEIGHTS.topic, f1.topic, f2.topic);
  exact(SCENE_WEIGHTS.timeOfDay, f1.timeOfDay, f2.timeOfDay);
  return weight === 0 ? 0 : Math.min(1, Math.round((score / weight) * 1e12) / 1e12);
};

export const SCENE_KEY_SEGMENTS = ['chan', 'peer', 'tools', 'topic', 'time'] as const;
export type SceneKeySegment = (typeof SCENE_KEY_SEGMENTS)[number];

/** A declared scene key that cannot be read. */
export class SceneKeyError extends HologramError {
  readonly code = 'SCENE_KEY_INVALID';
  constructor(
    readonly key: string,
    readonly problem: string,
  ) {
    super(`cannot read the declared scene key '${key}': ${problem}`);
  }
}

/**
 * Features of a declared scene, from its key alone: `/`-separated `name:value` segments,
 * names from `SCENE_KEY_SEGMENTS` (`tools` and `topic` take comma-separated lists, `time` a
 * `TimeOfDay`). Unknown, repeated, empty or malformed segments throw `SceneKeyError`.
 *
 * @example declaredSceneFeatures('chan:qq/peer:group_1') // { channel: 'qq', peer: 'group_1', tools: [], topic: [] }
 */
export const declaredSceneFeatures = (key: string): SceneFeatures => {
  const values = new Map<SceneKeySegment, string>();
  for (const segment of key.split('/')) {
    const colon = segment.indexOf(':');
    if (colon <= 0) throw new SceneKeyError(key, `segment '${segment}' is not name:value (valid names: ${SCENE_KEY_SEGMENTS.join(', ')})`);
    const name = segment.slice(0, colon).trim();
    const value = segment.slice(colon + 1).trim();
    if (!isSegment(name)) throw new SceneKeyError(key, `unknown segment '${name}' (valid names: ${SCENE_KEY_SEGMENTS.join(', ')})`);
    if (value === '') throw new SceneKeyError(key, `segment '${name}' has an empty value`);
    if (values.has(name)) throw new SceneKeyError(key, `segment '${name}' appears twice`);
    values.set(name, value);
  }
  const time = values.get('time');
  if (time !== undefined && !isTimeOfDay(time)) {
    throw new SceneKeyError(key, `time must be one of ${TIMES_OF_DAY.join(', ')}, got '${time}'`);
  }
  const list = (v: string | undefined) => (v === undefined ? [] : v.split(','));
  return features({
    channel: values.get('chan'),
    peer: values.get('peer'),
    tools: distinctSorted(list(values.get('tools')), (t) => t.trim()),
    topic: distinctSorted(list(values.get('topic')), keyword),
    timeOfDay: time,
  });
};

const isSegment = (name: string): name is SceneKeySegment => (SCENE_KEY_SEGMENTS as readonly string[]).includes(name);
const isTimeOfDay = (value: string): value is TimeOfDay => (TIMES_OF_DAY as readonly string[]).includes(value);
