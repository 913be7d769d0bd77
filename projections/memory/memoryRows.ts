/** Shapes of the memory events' parts (declared in the event catalog), as the folds read them. */
import type { BlockRef, ContextEventData, TripleData } from '../../events/index.ts';

export type { BlockRef, ContextEventData, TripleData };

/** An utterance as it reads in a doc or a recall: its speaker's name first, so the name is one of its words. */
export const utteranceText = (e: Pick<ContextEventData, 'speaker' | 'text'>): string => (e.speaker ? `${e.speaker}: ${e.text}` : e.text);

/** One name for one entity: trimmed, case-folded, inner whitespace collapsed. */
export const entityKey = (name: string): string => name.normalize('NFKC').trim().replace(/\s+/g, ' ').toLowerCase();

export const json = (value: unknown): string => JSON.stringify(value ?? []);
