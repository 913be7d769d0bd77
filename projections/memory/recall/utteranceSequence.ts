/**
 * The order in which utterances entered each scope, and so their neighbours. A recall item
 * that stands for one utterance is indexed with its neighbours' words, counted by distance:
 * what came just before weighs most, since a reply is about what it answers and rarely repeats
 * its words. Built from `ContextEventAppended` events alone, so the live index and one rebuilt
 * at start give every item the same neighbours, whatever tier the item is in by then.
 */
import type { NeighbourText } from './recallIndex.ts';

/** How many times a neighbour's words count, by distance (an item's own words count 5). */
export type NeighbourWeights = Readonly<{ before: readonly number[]; after: readonly number[] }>;

export const NEIGHBOUR_WEIGHTS: NeighbourWeights = { before: [4, 2], after: [1, 1] };

export class UtteranceSequence {
  constructor(private readonly weights: NeighbourWeights = NEIGHBOUR_WEIGHTS) {}

  private readonly texts = new Map<string, string[]>();
  private readonly eventIds = new Map<string, string[]>();
  private readonly positions = new Map<string, { scope: string; index: number }>();

  /** Every scope's utterances in order: what a snapshot keeps (appending them again in order gives the same sequence). */
  toState(): readonly Readonly<{ scope: string; eventIds: readonly string[]; texts: readonly string[] }>[] {
    return [...this.texts].map(([scope, texts]) => ({ scope, eventIds: this.eventIds.get(scope)!, texts }));
  }

  /** Notes the next utterance of a scope; an event noted before keeps its place. */
  append(scope: string, eventId: string, text: string): void {
    if (this.positions.has(eventId)) return;
    const texts = this.texts.get(scope) ?? [];
    const ids = this.eventIds.get(scope) ?? [];
    this.positions.set(eventId, { scope, index: texts.length });
    texts.push(text);
    ids.push(eventId);
    this.texts.set(scope, texts);
    this.eventIds.set(scope, ids);
  }

  /** The text of a noted utterance, the very string the sequence holds (so items can share it). */
  textOf(eventId: string): string | undefined {
    const position = this.positions.get(eventId);
    return position && this.texts.get(position.scope)![position.index];
  }

  /** The neighbours known now of an utterance, with their weights (none for an unknown event). */
  neighboursOf(eventId: string): NeighbourText[] {
    const position = this.positions.get(eventId);
    if (!position) return [];
    const texts = this.texts.get(position.scope)!;
    const out: NeighbourText[] = [];
    this.weights.before.forEach((weight, d) => {
      const text = texts[position.index - d - 1];
      if (text !== undefined) out.push({ text, weight });
    });
    this.weights.after.forEach((weight, d) => {
      const text = texts[position.index + d + 1];
      if (text !== undefined) out.push({ text, weight });
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
      return earlier !== undefined ? [{ eventId: earlier, weight }] : [];
    });
  }
}
