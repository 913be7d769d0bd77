/** Read-only lookups the memory tools make on the memory read models before deciding what to append. */
import { entities, entityKey, type BlockRef, type ReadModelTx, type RelationRow } from '../../../actors/index.ts';

export type EntityRow = Readonly<{ entity: string; name: string }>;

export const findEntity = (tx: ReadModelTx, name: string): EntityRow | undefined =>
  tx.get<EntityRow>('SELECT entity, name FROM memory_graph_entities WHERE entity = ?', [entityKey(name)]);

export const findRelation = (tx: ReadModelTx, relationId: string): RelationRow | undefined =>
  tx.get<RelationRow>(
    'SELECT relation_id, subject, predicate, object, confidence, sentence, source_events, cites FROM memory_graph_relations WHERE relation_id = ?',
    [relationId],
  );

/** Every relation with the entity as subject or object, by id. */
export const relationsTouching = (tx: ReadModelTx, entity: string): string[] =>
  tx
    .all<{ relation_id: string }>('SELECT relation_id FROM memory_graph_relations WHERE subject = ? OR object = ? ORDER BY relation_id', [
      entity,
      entity,
    ])
    .map((r) => r.relation_id);

const editDistance = (a: string, b: string): number => {
  let row = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const next = [i];
    for (let j = 1; j <= b.length; j++) next.push(Math.min(row[j]! + 1, next[j - 1]! + 1, row[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1)));
    row = next;
  }
  return row[b.length]!;
};

/** Stored names near `name` (containing it, contained in it, or a few edits away), nearest first. */
export const closeNames = (tx: ReadModelTx, name: string, limit = 5): string[] => {
  const key = entityKey(name);
  const threshold = Math.max(2, Math.floor(key.length / 3));
  return entities(tx)
    .map((e) => ({ name: e.name, distance: e.entity.includes(key) || key.includes(e.entity) ? 0 : editDistance(key, e.entity) }))
    .filter((e) => e.distance <= threshold)
    .sort((a, b) => a.distance - b.distance || a.name.localeCompare(b.name))
    .slice(0, limit)
    .map((e) => e.name);
};

export type ColdDocContent = Readonly<{
  scope: string;
  text: string;
  cites: string[];
  events: unknown[];
  createdAt: number;
  blocks: BlockRef[];
}>;

/** A cold doc as it stands in L2, with the blocks it holds. */
export const coldDocContent = (tx: ReadModelTx, docId: string): ColdDocContent | undefined => {
  const row = tx.get<{ scope: string; text: string; cites: string; events: string; created_at: number }>(
    'SELECT scope, text, cites, events, created_at FROM memory_cold_docs WHERE doc_id = ?',
    [docId],
  );
  if (!row) return undefined;
  const blocks = tx
    .all<{ block_id: string; kind: 'text' | 'media'; mime: string | null }>(
      `SELECT block_id, kind, mime FROM memory_blocks_holders WHERE tier = 'cold' AND holder = ? ORDER BY block_id`,
      [docId],
    )
    .map((b): BlockRef => ({ blockId: b.block_id, kind: b.kind, ...(b.mime ? { mime: b.mime } : {}) }));
  return {
    scope: row.scope,
    text: row.text,
    cites: JSON.parse(row.cites) as string[],
    events: JSON.parse(row.events) as unknown[],
    createdAt: row.created_at,
    blocks,
  };
};

export type MemoryCounts = Readonly<{
  contextByScope: readonly { scope: string; events: number }[];
  coldDocs: number;
  coldAccesses: number;
  entities: number;
  relations: number;
  blocksByTier: readonly { tier: string; blocks: number }[];
}>;

export const memoryCounts = (tx: ReadModelTx): MemoryCounts => {
  const cold = tx.get<{ docs: number; accesses: number }>(
    'SELECT count(*) AS docs, coalesce(sum(accesses), 0) AS accesses FROM memory_cold_docs',
  );
  const count = (table: string) => tx.get<{ n: number }>(`SELECT count(*) AS n FROM ${table}`)?.n ?? 0;
  return {
    contextByScope: tx.all('SELECT scope, count(*) AS events FROM memory_context_events GROUP BY scope ORDER BY scope'),
    coldDocs: cold?.docs ?? 0,
    coldAccesses: cold?.accesses ?? 0,
    entities: count('memory_graph_entities'),
    relations: count('memory_graph_relations'),
    blocksByTier: tx.all('SELECT tier, count(*) AS blocks FROM memory_blocks_holders GROUP BY tier ORDER BY tier'),
  };
};
