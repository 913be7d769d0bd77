/**
 * Who holds each block (text or media, content-derived id): a context event in L1, a cold doc
 * in L2, or a relation in L3. Every move names the new holder, so a block has exactly one
 * holder at any time; a block whose holder leaves without a successor is gone with it.
 */
import { defineProjection, type ReadModelTx } from '../projection.ts';
import type { BlockRef } from './memoryRows.ts';

export type HolderTier = 'context' | 'cold' | 'graph';

const hold = (tx: ReadModelTx, block: BlockRef, tier: HolderTier, holder: string, seq: number) =>
  tx.run(
    `INSERT INTO memory_blocks_holders (block_id, kind, mime, tier, holder, since_seq) VALUES (?, ?, ?, ?, ?, ?)
     ON CONFLICT (block_id) DO UPDATE SET tier = excluded.tier, holder = excluded.holder, since_seq = excluded.since_seq`,
    [block.blockId, block.kind, block.mime ?? null, tier, holder, seq],
  );

export const blocksProjection = defineProjection({
  name: 'memory_blocks',
  version: 1,
  handles: [
    'ContextEventAppended',
    'ContextEventsSunk',
    'ColdDocCommitted',
    'ContextEventsRestored',
    'ColdDocRemoved',
    'ColdDocDistilled',
    'MemoryCommitted',
    'MemoryPurged',
    'EntityDeleted',
  ],
  tables: [
    {
      name: 'memory_blocks_holders',
      ddl: `CREATE TABLE memory_blocks_holders (
        block_id TEXT PRIMARY KEY, kind TEXT NOT NULL, mime TEXT, tier TEXT NOT NULL, holder TEXT NOT NULL, since_seq INTEGER NOT NULL
      ) WITHOUT ROWID;
      CREATE INDEX memory_blocks_holders_holder ON memory_blocks_holders (holder)`,
    },
  ],
  evolve(tx, event) {
    const seq = event.seq;
    switch (event.type) {
      case 'ContextEventAppended': {
        const e = event.data.event;
        for (const b of e.blocks ?? []) hold(tx, b, 'context', e.eventId, seq);
        return;
      }
      case 'ContextEventsRestored':
        for (const e of event.data.events) for (const b of e.blocks ?? []) hold(tx, b, 'context', e.eventId, seq);
        return;
      case 'ContextEventsSunk':
        for (const { docId, events } of event.data.docs)
          for (const e of events) for (const b of e.blocks ?? []) hold(tx, b, 'cold', docId, seq);
        return;
      case 'ColdDocCommitted':
        for (const b of event.data.blocks ?? []) hold(tx, b, 'cold', event.data.docId, seq);
        return;
      case 'ColdDocDistilled':
        for (const t of event.data.triples) for (const b of t.blocks ?? []) hold(tx, b, 'graph', t.relationId, seq);
        tx.run(`DELETE FROM memory_blocks_holders WHERE tier = 'cold' AND holder = ?`, [event.data.docId]);
        return;
      case 'MemoryCommitted':
        for (const t of event.data.triples) for (const b of t.blocks ?? []) hold(tx, b, 'graph', t.relationId, seq);
        return;
      case 'ColdDocRemoved':
        tx.run(`DELETE FROM memory_blocks_holders WHERE tier = 'cold' AND holder = ?`, [event.data.docId]);
        return;
      case 'MemoryPurged':
      case 'EntityDeleted':
        for (const id of event.data.relationIds) tx.run(`DELETE FROM memory_blocks_holders WHERE tier = 'graph' AND holder = ?`, [id]);
        return;
    }
  },
  view: (tx) => tx.all('SELECT tier, count(*) AS blocks FROM memory_blocks_holders GROUP BY tier ORDER BY tier'),
});

export const holderOf = (tx: ReadModelTx, blockId: string): { tier: HolderTier; holder: string } | undefined =>
  tx.get('SELECT tier, holder FROM memory_blocks_holders WHERE block_id = ?', [blockId]);

/** The blocks a holder (a context event, a cold doc or a relation) holds now. */
export const blocksHeldBy = (tx: ReadModelTx, tier: HolderTier, holder: string): BlockRef[] =>
  tx
    .all<{ block_id: string; kind: 'text' | 'media'; mime: string | null }>(
      'SELECT block_id, kind, mime FROM memory_blocks_holders WHERE tier = ? AND holder = ? ORDER BY block_id',
      [tier, holder],
    )
    .map((b): BlockRef => ({ blockId: b.block_id, kind: b.kind, ...(b.mime ? { mime: b.mime } : {}) }));

export const blockCounts = (tx: ReadModelTx): { tier: string; blocks: number }[] =>
  tx.all('SELECT tier, count(*) AS blocks FROM memory_blocks_holders GROUP BY tier ORDER BY tier');
