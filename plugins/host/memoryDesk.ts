/**
 * The memory as the web UI shows it: the live read models of each tier (L1 context by
 * conversation, L2 cold docs, L3 relations), the scenes, and a recall through the one recall
 * path the agent uses, each item with its tier and score. Read-only; lists are capped.
 */
import {
  allRelations,
  blockCounts,
  coldDocs,
  contextOf,
  contextScopes,
  graphCounts,
  type Memory,
  sceneMembers,
  scenes,
} from '../../actors/index.ts';

/** Most rows of one list the page gets (the newest). */
export const MAX_ROWS = 300;
export const MAX_RECALL = 50;

export class MemoryDesk {
  constructor(private readonly memory: Memory) {}

  browse(scope: string | undefined): unknown {
    const tx = this.memory.readModels;
    const scopes = contextScopes(tx);
    const shown = scope ?? scopes[0];
    const sceneRows = scenes(tx);
    const members = sceneMembers(
      tx,
      sceneRows.map((s) => s.scene_id),
    );
    return {
      scopes,
      scope: shown ?? null,
      context: shown
        ? contextOf(tx, shown)
            .slice(-MAX_ROWS)
            .map(({ event_id, role, text, at }) => ({ eventId: event_id, role, text, at }))
        : [],
      cold: coldDocs(tx)
        .filter((d) => shown === undefined || d.scope === shown)
        .slice(-MAX_ROWS)
        .map(({ doc_id, text, created_at, accesses }) => ({ docId: doc_id, text, createdAt: created_at, accesses })),
      relations: allRelations(tx)
        .slice(-MAX_ROWS)
        .map(({ relation_id, subject, predicate, object, confidence }) => ({
          relationId: relation_id,
          subject,
          predicate,
          object,
          confidence,
        })),
      scenes: sceneRows.slice(-MAX_ROWS).map((s) => ({
        sceneId: s.scene_id,
        kind: s.kind,
        key: s.key,
        strength: s.strength,
        occurrences: s.occurrences,
        members: members.get(s.scene_id)?.length ?? 0,
      })),
      counts: { ...graphCounts(tx), blocks: blockCounts(tx) },
    };
  }

  async recall(query: string, k: number, scope: string | undefined): Promise<unknown> {
    const hits = await this.memory.recall(query, Math.min(Math.max(1, k), MAX_RECALL), scope);
    return { query, hits: hits.map((h) => ({ tier: h.tier, score: h.score, text: h.text, cites: h.cites })) };
  }
}
