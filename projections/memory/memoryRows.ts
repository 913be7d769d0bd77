/** Shapes of the memory events' parts, as the folds read them. */

export type BlockRef = Readonly<{ blockId: string; kind: 'text' | 'media'; mime?: string; text?: string }>;

export type ContextEventData = Readonly<{
  eventId: string;
  role: 'user' | 'agent' | 'cold_storage' | 'system';
  speaker?: string;
  text: string;
  at: number;
  cites?: readonly string[];
  blocks?: readonly BlockRef[];
}>;

export type TripleData = Readonly<{
  relationId: string;
  subject: string;
  predicate: string;
  object: string;
  confidence: number;
  sentence?: string;
  sourceEventIds?: readonly string[];
  cites?: readonly string[];
  blocks?: readonly BlockRef[];
  /** When what it stands for was said (its first source event's time). */
  happenedAt?: number;
}>;

/** An utterance as it reads in a doc or a recall: its speaker's name first, so the name is one of its words. */
export const utteranceText = (e: Pick<ContextEventData, 'speaker' | 'text'>): string => (e.speaker ? `${e.speaker}: ${e.text}` : e.text);

/** One name for one entity: trimmed, case-folded, inner whitespace collapsed. */
export const entityKey = (name: string): string => name.normalize('NFKC').trim().replace(/\s+/g, ' ').toLowerCase();

export const json = (value: unknown): string => JSON.stringify(value ?? []);
