/** The daemon's memory as plugins reach it through the hub: recall, commit (built-ins only), knowledge queries. */
import type { Clock, IdSource } from '../../events/index.ts';
import type { Memory } from '../../actors/index.ts';
import { graphNeighbourhood, type TripleData } from '../../actors/index.ts';
import type { HubMemory } from './pluginHub.ts';

export const hubMemoryOf = (memory: Memory, clock: Clock, ids: IdSource): HubMemory => ({
  recall: async (query, k) => (await memory.recall(query, k)).map((h) => ({ tier: h.tier, text: h.text, cites: h.cites, score: h.score })),
  commit: async (_plugin, triples, sentence) => {
    const data: TripleData[] = triples.map((t) => ({
      relationId: ids.next(),
      subject: t.subject,
      predicate: t.predicate,
      object: t.object,
      confidence: typeof t.confidence === 'number' && t.confidence >= 0 && t.confidence <= 1 ? t.confidence : 1,
      ...(sentence ? { sentence } : {}),
    }));
    const at = clock.now();
    await memory.record([{ type: 'MemoryCommitted', data: { triples: data, by: 'tool', at } }], at);
    return data.map((t) => t.relationId);
  },
  knowledge: (entity, depth) =>
    graphNeighbourhood(memory.readModels, [entity], depth).map(({ relation, hops }) => ({
      subject: relation.subject,
      predicate: relation.predicate,
      object: relation.object,
      confidence: relation.confidence,
      sentence: relation.sentence,
      hops,
    })),
});
