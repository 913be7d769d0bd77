/**
 * L2, cold context: documents made of sunk (or committed) events, with their access counts.
 * A peek only counts an access; the doc leaves when it is recalled (after its events are back
 * in L1), distilled into the graph, or purged.
 */
import { defineProjection, type ReadModelTx } from '../projection.ts';
import { json, utteranceText, type ContextEventData } from './memoryRows.ts';

export const docText = (events: readonly ContextEventData[]): string => events.map(utteranceText).join('\n');

export const coldProjection = defineProjection({
  name: 'memory_cold',
  version: 1,
  handles: ['ContextEventsSunk', 'ColdDocCommitted', 'ColdDocPeeked', 'ColdDocRemoved', 'ColdDocDistilled'],
  tables: [
    {
      name: 'memory_cold_docs',
      ddl: `CREATE TABLE memory_cold_docs (
        doc_id TEXT PRIMARY KEY, scope TEXT NOT NULL, text TEXT NOT NULL, cites TEXT NOT NULL, events TEXT NOT NULL,
        created_at REAL NOT NULL, accesses INTEGER NOT NULL DEFAULT 0, last_access_at REAL NOT NULL
      ) WITHOUT ROWID;
      CREATE INDEX memory_cold_docs_idle ON memory_cold_docs (last_access_at)`,
    },
  ],
  evolve(tx, event) {
    switch (event.type) {
      case 'ContextEventsSunk': {
        const { scope, docs, at } = event.data;
        for (const { docId, events } of docs) {
          const firstAt = Math.max(...events.map((e) => e.at));
          tx.run(
            'INSERT INTO memory_cold_docs (doc_id, scope, text, cites, events, created_at, last_access_at) VALUES (?, ?, ?, ?, ?, ?, ?)',
            [docId, scope, docText(events), json(events.flatMap((e) => e.cites ?? [])), JSON.stringify(events), firstAt, at],
          );
        }
        return;
      }
      case 'ColdDocCommitted': {
        const { docId, scope, text, cites, blocks, at } = event.data;
        // A committed doc came from no context event: it is one cold_storage event, which is
        // what a recall puts back into L1 (with its blocks).
        const held: ContextEventData = {
          eventId: docId,
          role: 'cold_storage',
          text,
          at,
          ...(cites?.length ? { cites } : {}),
          ...(blocks?.length ? { blocks } : {}),
        };
        tx.run(
          'INSERT INTO memory_cold_docs (doc_id, scope, text, cites, events, created_at, last_access_at) VALUES (?, ?, ?, ?, ?, ?, ?)',
          [docId, scope, text, json(cites), JSON.stringify([held]), at, at],
        );
        return;
      }
      case 'ColdDocPeeked':
        tx.run('UPDATE memory_cold_docs SET accesses = accesses + 1, last_access_at = max(last_access_at, ?) WHERE doc_id = ?', [
          event.data.at,
          event.data.docId,
        ]);
        return;
      case 'ColdDocRemoved':
      case 'ColdDocDistilled':
        tx.run('DELETE FROM memory_cold_docs WHERE doc_id = ?', [event.data.docId]);
        return;
    }
  },
  view: (tx) => tx.get('SELECT count(*) AS docs, coalesce(sum(accesses), 0) AS accesses FROM memory_cold_docs'),
});

export type ColdDocRow = Readonly<{
  doc_id: string;
  scope: string;
  text: string;
  cites: string;
  events: string;
  created_at: number;
  accesses: number;
  last_access_at: number;
}>;

export const coldDocs = (tx: ReadModelTx): ColdDocRow[] =>
  tx.all<ColdDocRow>(
    'SELECT doc_id, scope, text, cites, events, created_at, accesses, last_access_at FROM memory_cold_docs ORDER BY doc_id',
  );

export const coldDocById = (tx: ReadModelTx, docId: string): ColdDocRow | undefined =>
  tx.get<ColdDocRow>(
    'SELECT doc_id, scope, text, cites, events, created_at, accesses, last_access_at FROM memory_cold_docs WHERE doc_id = ?',
    [docId],
  );

/** Docs the archive loop distils: at most `maxAccesses` reads and idle since `idleSince`. */
export const coldDocsToArchive = (tx: ReadModelTx, idleSince: number, maxAccesses = 2): ColdDocRow[] =>
  tx.all<ColdDocRow>(
    'SELECT doc_id, scope, text, cites, events, created_at, accesses, last_access_at FROM memory_cold_docs WHERE accesses <= ? AND last_access_at <= ? ORDER BY doc_id',
    [maxAccesses, idleSince],
  );

export const coldCounts = (tx: ReadModelTx): { docs: number; accesses: number } =>
  tx.get<{ docs: number; accesses: number }>('SELECT count(*) AS docs, coalesce(sum(accesses), 0) AS accesses FROM memory_cold_docs') ?? {
    docs: 0,
    accesses: 0,
  };
