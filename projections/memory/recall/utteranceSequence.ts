/**
 * The order in which utterances entered each scope, and so their neighbours. A recall item
 * that stands for one utterance is indexed with its neighbours' words, counted by distance:
 * what came just before weighs most, since a reply is about what it answers and rarely repeats
 * its words. Utterances with a longer pause between them than the sequence is given are not
 * each other's neighbours: what is said days later is not a reply. Built from
 * `ContextEventAppended` events alone, so the live index and one rebuilt at start give every
 * item the same neighbours, whatever tier the item is in by then.
 */
import type { NeighbourText } from './recallIndex.ts';

/** How many times a neighbour's words count, by distance (an item's own words count 5). */
export type NeighbourWeights = Readonly<{ before: readonly number[]; after: readonly number[] }>;

export const NEIGHBOUR_WEIGHTS: NeighbourWeights = { before: [4, 2], after: [1, 1] };

/** Utterances more than this apart (ms) are not each other's neighbours: a longer pause ends a stretch of talk. */
export const NEIGHBOUR_PAUSE_MS = 3_600_000;

/** Every scope's utterances in order, with when each was said: appending them again in order gives the same sequence. */
export type UtteranceSequenceState = readonly Readonly<{
  scope: string;
  eventIds: readonly string[];
  texts: readonly string[];
  ats: readonly number[];
}>[];

export class UtteranceSequence {
  /** `pauseMs`: utterances further apart than this (ms, from one to the next) are not neighbours (Infinity: no limit). */
  constructor(
    private readonly weights: NeighbourWeights = NEIGHBOUR_WEIGHTS,
    private readonly pauseMs = NEIGHBOUR_PAUSE_MS,
  ) {}

  private readonly texts = new Map<string, string[]>();
  private readonly eventIds = new Map<string, string[]>();
  private readonly ats = new Map<string, number[]>();
  /** Per scope, for each utterance, which stretch of talk without a longer pause than `pauseMs` it belongs to. */
  private readonly stretches = new Map<string, number[]>();
  private readonly positions = new Map<string, { scope: string; index: number }>();

  /** What a snapshot keeps. */
  toState(): UtteranceSequenceState {
    return [...this.texts].map(([scope, texts]) => ({ scope, eventIds: this.eventIds.get(scope)!, texts, ats: this.ats.get(scope)! }));
  }

  /** Notes the next utterance of a scope, said at `at`; an event noted before keeps its place. */
  append(scope: string, eventId: string, text: string, at: number): void {
    if (this.positions.has(eventId)) return;
    const texts = this.texts.get(scope) ?? [];
    const ids = this.eventIds.get(scope) ?? [];
    const ats = this.ats.get(scope) ?? [];
    const stretches = this.stretches.get(scope) ?? [];
    const index = texts.length;
    const paused = index > 0 && at - ats[index - 1]! > this.pauseMs;
    this.positions.set(eventId, { scope, index });
    texts.push(text);
    ids.push(eventId);
    ats.push(at);
    stretches.push(index === 0 ? 0 : stretches[index - 1]! + (paused ? 1 : 0));
    this.texts.set(scope, texts);
    this.eventIds.set(scope, ids);
    this.ats.set(scope, ats);
    this.stretches.set(scope, stretches);
  }

  /** Whether the utterances at `a` and `b` of a scope were said in one stretch of talk. */
  private together(scope: string, a: number, b: number): boolean {
    const stretches = this.stretches.get(scope)!;
    return stretches[a] === stretches[b];
  }

  /** The text of a noted utterance, the very string the sequence holds (so items can share it). */
  textOf(eventId: string): string | undefined {
    const position = this.positions.get(eventId);
    return position && this.texts.get(position.scope)![position.index];
  }

  /** The scope an utterance was said in (none for an unknown event). */
  scopeOf(eventId: string): string | undefined {
    return this.positions.get(eventId)?.scope;
  }

  /** The neighbours known now of an utterance, with their weights (none for an unknown event). */
  neighboursOf(eventId: string): NeighbourText[] {
    const position = this.positions.get(eventId);
    if (!position) return [];
    const texts = this.texts.get(position.scope)!;
    const out: NeighbourText[] = [];
    const near = (index: number): boolean => this.together(position.scope, position.index, index);
    this.weights.before.forEach((weight, d) => {
      const text = texts[position.index - d - 1];
      if (text !== undefined && near(position.index - d - 1)) out.push({ text, weight });
    });
    this.weights.after.forEach((weight, d) => {
      const text = texts[position.index + d + 1];
      if (text !== undefined && near(position.index + d + 1)) out.push({ text, weight });
    });
    return out;
  }

  /** Whether an "after" neighbour may still come for this utterance (not for an unknown one). */
  awaitsNeighbours(eventId: string): boolean {
    const position = this.positions.get(eventId);
    return position !== undefined && position.index + this.weights.after.length >= this.texts.get(position.scope)!.length;
  }

  /** The utterance this one is the farthest possible "after" neighbour of (itself when there are none): it gets no neighbour after this one. */
  completedBy(eventId: string): string | undefined {
    const position = this.positions.get(eventId);
    return position && this.eventIds.get(position.scope)![position.index - this.weights.after.length];
  }

  /** The utterances before this one that it is an "after" neighbour of, each with its weight for them. */
  earlierNeighbours(eventId: string): { eventId: string; weight: number }[] {
    const position = this.positions.get(eventId);
    if (!position) return [];
    const ids = this.eventIds.get(position.scope)!;
    return this.weights.after.flatMap((weight, d) => {
      const earlier = ids[position.index - d - 1];
      return earlier !== undefined && this.together(position.scope, position.index, position.index - d - 1)
        ? [{ eventId: earlier, weight }]
        : [];
    });
  }
}
