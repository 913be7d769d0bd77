/**
 * How much each item counts in one recall, beyond its words: an item outside the scope does
 * not count; what the person a question is about said counts more (a question about Melanie is
 * answered by what Melanie said, even when her reply does not repeat the question's words);
 * what was said on a day or in a month the query names, or speaks of one ("last night", read
 * against when it was said), counts more; a when-question prefers
 * utterances that say when; and what happened in the scenes the situation recalls counts a
 * little more.
 */
import type { RecallWeight, WeighedItem } from './recallIndex.ts';
import { personsNamedIn, timeWindowsOf, type TimeWindow } from './recallQuery.ts';
import { saidOrSpokenOfWithin } from './spokenOfTime.ts';

/** ×(1 + this) for what the first person a query names said (or a fact about them). */
export const PERSON_BOOST = 0.5;
/** ×(1 + this) for what was said within a day or month the query names. */
export const TIME_BOOST = 1;
/** ×(1 + this) for an utterance that says when (yesterday, last week, a date) in answer to a when-question. */
export const WHEN_BOOST = 0.5;
/** ×(1 + this × the scene's relative score) for an item of a recalled scene. */
export const SCENE_BOOST = 0.25;

/** How much each kind of focus multiplies an item's weight by, less one (the constants above, unless a benchmark varies them). */
export type RecallBoosts = Readonly<{ person: number; time: number; when: number; scene: number }>;

export const RECALL_BOOSTS: RecallBoosts = { person: PERSON_BOOST, time: TIME_BOOST, when: WHEN_BOOST, scene: SCENE_BOOST };

/** Words that place something in time. */
const SAYS_WHEN =
  /\b(?:yesterday|today|tonight|tomorrow|ago|recently|lately|weekend|last|next|this (?:week|month|year|morning|evening|afternoon)|(?:mon|tues|wednes|thurs|fri|satur|sun)day|january|february|march|april|may|june|july|august|september|october|november|december|\d{4})\b|昨天|今天|明天|前天|上周|上个?星期|上个?月|去年|今年|最近|周末|\d+月\d+[日号]/i;
/** Whether `text` says when something happened; an item the index keeps carries the answer (`saysWhen`), worked out once. */
export const saysWhen = (item: Readonly<{ text: string; saysWhen?: boolean }>): boolean => item.saysWhen ?? SAYS_WHEN.test(item.text);

/** A question that asks when. */
const ASKS_WHEN = /^\s*when\b|\bwhat (?:time|day|date|year|month)\b|\bhow long ago\b|什么时候|哪天|几号|何时/i;

export type RecallFocus = Readonly<{
  /** Only items of this scope count (graph items belong to every scope, unless `ownOnly`). */
  scope?: string;
  /** Only the scope's own items count: the graph, which every conversation shares, is left out (a guest's recall). */
  ownOnly?: boolean;
  /** The person the query is about (the first it names), lower-cased. */
  person?: string;
  windows: readonly TimeWindow[];
  /** The query asks when something happened. */
  asksWhen: boolean;
  /** Context event id → its scene's weight relative to the best recalled scene (0..1). */
  sceneWeights?: ReadonlyMap<string, number>;
}>;

/** What a query focuses on, given the people the memory knows (the speakers it has heard) and when it is asked. */
export const focusOf = (
  query: string,
  knownPersons: Iterable<string>,
  scope?: string,
  sceneWeights?: ReadonlyMap<string, number>,
  /** When the query is asked: what "yesterday" or "last week" in it mean. */
  now?: number,
): RecallFocus => {
  const [person] = personsNamedIn(query, knownPersons);
  return {
    ...(scope !== undefined ? { scope } : {}),
    ...(person !== undefined ? { person: person.toLowerCase() } : {}),
    windows: timeWindowsOf(query, now),
    asksWhen: ASKS_WHEN.test(query),
    ...(sceneWeights && sceneWeights.size > 0 ? { sceneWeights } : {}),
  };
};

/** An item's weight for `focus`; its `max` is the most any item can get, every boost that can apply applied. */
export const weighFor = (focus: RecallFocus, boosts: RecallBoosts = RECALL_BOOSTS): RecallWeight => {
  const weigh = (item: WeighedItem): number => {
    if (focus.scope !== undefined && item.scope !== focus.scope && (item.tier !== 'graph' || focus.ownOnly)) return 0;
    let weight = 1;
    if (focus.asksWhen && saysWhen(item)) weight *= 1 + boosts.when;
    if (focus.person !== undefined && item.person?.toLowerCase() === focus.person) weight *= 1 + boosts.person;
    if (focus.windows.length > 0 && saidOrSpokenOfWithin(item, focus.windows)) weight *= 1 + boosts.time;
    if (focus.sceneWeights) weight *= 1 + boosts.scene * sceneWeightOf(item, focus.sceneWeights);
    return weight;
  };
  // Boosts below zero would make the most an item can weigh 1 (no boost applies); above, all of them.
  let max = 1;
  if (focus.asksWhen) max *= 1 + Math.max(0, boosts.when);
  if (focus.person !== undefined) max *= 1 + Math.max(0, boosts.person);
  if (focus.sceneWeights) max *= 1 + Math.max(0, boosts.scene);
  if (focus.windows.length === 0 || !(boosts.time > 0)) return Object.assign(weigh, { max });
  // The time boost is the one few items get: those said in, or speaking of, the days the query names.
  return Object.assign(weigh, { max: max * (1 + boosts.time), windowed: { windows: focus.windows, restMax: max } });
};

/** The best relative weight (0..1) of the scenes the item's utterances belong to. */
const sceneWeightOf = (item: WeighedItem, sceneWeights: ReadonlyMap<string, number>): number =>
  Math.min(1, Math.max(0, ...(item.sources ?? []).map((s) => sceneWeights.get(s) ?? 0)));
