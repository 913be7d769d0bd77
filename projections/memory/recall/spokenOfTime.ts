/**
 * The times an utterance speaks of: the days and months it names, and its relative words
 * ("yesterday", "last Friday", "two weeks ago") read against when it was said, not against when
 * a question about it is asked. Pure.
 */
import { timeWindowsOf, type TimeWindow } from './recallQuery.ts';

/** A cheap first look: text with none of these names no time, so it is not parsed. */
const MAY_NAME_TIME =
  /\d|\b(?:ago|yesterday|today|tonight|tomorrow|night|week|weekend|month|year|last|past|next|this|jan|feb|mar|apr|may|jun|jul|aug|sept?|oct|nov|dec)|[天晚周月年号日]/i;

/**
 * The windows `text`, said at `at`, speaks of.
 *
 * @example
 * spokenOfWindows('I watched it last night!', Date.UTC(2022, 4, 2, 13)) // [{ from: Date.UTC(2022, 4, 1), to: Date.UTC(2022, 4, 2) }]
 */
export const spokenOfWindows = (text: string, at: number): TimeWindow[] => (MAY_NAME_TIME.test(text) ? timeWindowsOf(text, at) : []);

/**
 * Whether what was said at `at` in `text` falls in one of `windows`: said then, or speaks of a
 * time that lies within one. `spokenOf`, when given, is `spokenOfWindows(text, at)` worked out
 * before (the index keeps it with each item, so a recall does not parse every candidate again).
 */
export const saidOrSpokenOfWithin = (
  item: Readonly<{ text: string; at: number; spokenOf?: readonly TimeWindow[] }>,
  windows: readonly TimeWindow[],
): boolean =>
  windows.some((w) => item.at >= w.from && item.at < w.to) ||
  (item.spokenOf ?? spokenOfWindows(item.text, item.at)).some((spoken) => windows.some((w) => spoken.from >= w.from && spoken.to <= w.to));
