/**
 * A recall index read back from its state (as a snapshot holds it, every string decoded afresh)
 * ranks as the index it was taken from, and a state whose item names a tier there is none of is
 * refused with the item named, not indexed under it.
 */
import { describe, expect, it } from 'vitest';
import { RecallIndex, type RecallIndexState, type RecallItem } from '../../../projections/memory/recall/recallIndex.ts';

const tokenize = (text: string): string[] => text.toLowerCase().match(/[a-z0-9]+/g) ?? [];

const ITEMS: RecallItem[] = [
  { id: 'ctx:1', tier: 'context', scope: 'chat:ada', text: 'Ada glazed a bowl in the kiln', cites: ['D1:1'], at: 1, person: 'Ada' },
  { id: 'doc:2', tier: 'cold', scope: 'chat:ada', text: 'Bo bought tea for the studio', cites: ['D1:2'], at: 2, person: 'Bo' },
  { id: 'rel:3', tier: 'graph', scope: '', text: 'Ada likes clay', cites: ['D1:3'], at: 3, person: 'Ada' },
];

const indexed = (): RecallIndex => {
  const index = new RecallIndex({ tokenize });
  for (const item of ITEMS) index.put(item, [{ text: 'the kiln was hot', weight: 1 }]);
  return index;
};

/** The state as a snapshot's decoding gives it: a copy. */
const decoded = (state: RecallIndexState): RecallIndexState => structuredClone(state);

describe('RecallIndex state', () => {
  it('ranks, read back from its state, as the index it was taken from', () => {
    const index = indexed();
    const again = RecallIndex.fromState({ tokenize }, decoded(index.toState()));
    for (const query of ['kiln', 'tea', 'Ada clay', 'hot bowl']) {
      expect(again.search(query, 5)).toEqual(index.search(query, 5));
      expect(again.searchContext(query, 'chat:ada', 5)).toEqual(index.searchContext(query, 'chat:ada', 5));
    }
  });

  it('refuses an item whose tier is none of context, cold and graph', () => {
    const state = decoded(indexed().toState());
    const items = state.items.map((item) => (item.id === 'doc:2' ? { ...item, tier: 'attic' } : item));
    const spoiled = { ...state, items } as unknown as RecallIndexState;
    expect(() => RecallIndex.fromState({ tokenize }, spoiled)).toThrow(/doc:2 has no tier of context, cold, graph: attic/);
  });
});
