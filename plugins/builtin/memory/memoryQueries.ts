/** What the memory tools read before deciding, composed from the memory read models' own queries. */
import {
  blockCounts,
  blocksHeldBy,
  closeEntityNames,
  coldCounts,
  coldDocById,
  contextCounts,
  entityNamed,
  graphCounts,
  relationById,
  relationsTouching,
  type BlockRef,
  type ReadModelTx,
  type RelationRow,
} from '../../../actors/index.ts';

export type EntityRow = Readonly<{ entity: string; name: string }>;

export const findEntity = (tx: ReadModelTx, name: string): EntityRow | undefined => entityNamed(tx, name);

export const findRelation = (tx: ReadModelTx, relationId: string): RelationRow | undefined => relationById(tx, relationId);

export { relationsTouching };

/** Stored names near `name` (containing it, contained in it, or a few edits away), nearest first. */
export const closeNames = (tx: ReadModelTx, name: string, limit = 5): string[] => closeEntityNames(tx, name, limit);

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
  const row = coldDocById(tx, docId);
  if (!row) return undefined;
  return {
    scope: row.scope,
    text: row.text,
    cites: JSON.parse(row.cites) as string[],
    events: JSON.parse(row.events) as unknown[],
    createdAt: row.created_at,
    blocks: blocksHeldBy(tx, 'cold', docId),
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
  const cold = coldCounts(tx);
  return {
    contextByScope: contextCounts(tx),
    coldDocs: cold.docs,
    coldAccesses: cold.accesses,
    ...graphCounts(tx),
    blocksByTier: blockCounts(tx),
  };
};
