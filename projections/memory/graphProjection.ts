/**
 * L3, the graph: entities, relations with confidence, and each relation's sentence and the
 * context events (and their cites) it came from. Entities exist while a relation names them.
 */
import { editDistance } from '../../events/index.ts';
import { defineProjection, type ReadModelTx } from '../projection.ts';
import { entityKey, json, type TripleData } from './memoryRows.ts';

const touchEntity = (tx: ReadModelTx, name: string, seq: number) =>
  tx.run('INSERT INTO memory_graph_entities (entity, name, since_seq) VALUES (?, ?, ?) ON CONFLICT (entity) DO NOTHING', [
    entityKey(name),
    name.trim(),
    seq,
  ]);

const dropOrphans = (tx: ReadModelTx) =>
  tx.run(
    `DELETE FROM memory_graph_entities WHERE entity NOT IN (SELECT subject FROM memory_graph_relations UNION SELECT object FROM memory_graph_relations)`,
  );

/** `at`: when the triple was written, its time when it does not say when what it stands for happened. */
const addTriple = (tx: ReadModelTx, t: TripleData, source: string, seq: number, at: number) => {
  touchEntity(tx, t.subject, seq);
  touchEntity(tx, t.object, seq);
  tx.run(
    `INSERT INTO memory_graph_relations (relation_id, subject, predicate, object, confidence, sentence, source_events, cites, happened_at, source, since_seq)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (relation_id) DO NOTHING`,
    [
      t.relationId,
      entityKey(t.subject),
      t.predicate,
      entityKey(t.object),
      t.confidence,
      t.sentence ?? null,
      json(t.sourceEventIds),
      json(t.cites),
      t.happenedAt ?? at,
      source,
      seq,
    ],
  );
};

export const graphProjection = defineProjection({
  name: 'memory_graph',
  version: 3,
  handles: [
    'MemoryCommitted',
    'ColdDocDistilled',
    'EntitiesMerged',
    'EntityEdited',
    'RelationEdited',
    'EntityDeleted',
    'MemoryPurged',
    'EntityRecalled',
    'MergeProposed',
    'RelationReviewed',
  ],
  tables: [
    {
      name: 'memory_graph_entities',
      ddl: 'CREATE TABLE memory_graph_entities (entity TEXT PRIMARY KEY, name TEXT NOT NULL, kind TEXT, since_seq INTEGER NOT NULL) WITHOUT ROWID',
    },
    {
      name: 'memory_graph_relations',
      ddl: `CREATE TABLE memory_graph_relations (
        relation_id TEXT PRIMARY KEY, subject TEXT NOT NULL, predicate TEXT NOT NULL, object TEXT NOT NULL, confidence REAL NOT NULL,
        sentence TEXT, source_events TEXT NOT NULL, cites TEXT NOT NULL, happened_at INTEGER NOT NULL, source TEXT NOT NULL, since_seq INTEGER NOT NULL
      ) WITHOUT ROWID;
      CREATE INDEX memory_graph_relations_subject ON memory_graph_relations (subject);
      CREATE INDEX memory_graph_relations_object ON memory_graph_relations (object)`,
    },
    {
      name: 'memory_graph_merge_pairs',
      ddl: 'CREATE TABLE memory_graph_merge_pairs (a TEXT NOT NULL, b TEXT NOT NULL, PRIMARY KEY (a, b)) WITHOUT ROWID',
    },
    {
      name: 'memory_graph_reviewed',
      ddl: 'CREATE TABLE memory_graph_reviewed (relation_id TEXT PRIMARY KEY) WITHOUT ROWID',
    },
    {
      name: 'memory_graph_recalled',
      ddl: 'CREATE TABLE memory_graph_recalled (entity TEXT NOT NULL, turn TEXT NOT NULL, PRIMARY KEY (entity, turn)) WITHOUT ROWID',
    },
  ],
  evolve(tx, event) {
    switch (event.type) {
      case 'MemoryCommitted':
        for (const t of event.data.triples) addTriple(tx, t, event.data.by, event.seq, event.data.at);
        return;
      case 'ColdDocDistilled':
        for (const t of event.data.triples) addTriple(tx, t, `doc:${event.data.docId}`, event.seq, event.data.at);
        return;
      case 'EntitiesMerged': {
        const into = entityKey(event.data.into);
        const from = entityKey(event.data.from);
        if (into === from) return;
        tx.run('UPDATE memory_graph_relations SET subject = ? WHERE subject = ?', [into, from]);
        tx.run('UPDATE memory_graph_relations SET object = ? WHERE object = ?', [into, from]);
        tx.run('INSERT INTO memory_graph_entities (entity, name, since_seq) VALUES (?, ?, ?) ON CONFLICT (entity) DO NOTHING', [
          into,
          event.data.into.trim(),
          event.seq,
        ]);
        tx.run('DELETE FROM memory_graph_entities WHERE entity = ?', [from]);
        tx.run('UPDATE OR IGNORE memory_graph_recalled SET entity = ? WHERE entity = ?', [into, from]);
        tx.run('DELETE FROM memory_graph_recalled WHERE entity = ?', [from]);
        return;
      }
      case 'EntityEdited': {
        const entity = entityKey(event.data.entity);
        if (event.data.kind !== undefined) tx.run('UPDATE memory_graph_entities SET kind = ? WHERE entity = ?', [event.data.kind, entity]);
        const rename = event.data.renameTo;
        if (rename) {
          const to = entityKey(rename);
          if (to === entity) {
            tx.run('UPDATE memory_graph_entities SET name = ? WHERE entity = ?', [rename.trim(), entity]);
            return;
          }
          tx.run(
            'INSERT INTO memory_graph_entities (entity, name, kind, since_seq) SELECT ?, ?, kind, since_seq FROM memory_graph_entities WHERE entity = ? ON CONFLICT (entity) DO NOTHING',
            [to, rename.trim(), entity],
          );
          tx.run('UPDATE memory_graph_relations SET subject = ? WHERE subject = ?', [to, entity]);
          tx.run('UPDATE memory_graph_relations SET object = ? WHERE object = ?', [to, entity]);
          tx.run('DELETE FROM memory_graph_entities WHERE entity = ?', [entity]);
        }
        return;
      }
      case 'RelationEdited': {
        const { predicate, object, confidence, relationId } = event.data;
        tx.run(
          'UPDATE memory_graph_relations SET predicate = coalesce(?, predicate), object = coalesce(?, object), confidence = coalesce(?, confidence) WHERE relation_id = ?',
          [predicate ?? null, object ? entityKey(object) : null, confidence ?? null, relationId],
        );
        if (object) touchEntity(tx, object, event.seq);
        dropOrphans(tx);
        return;
      }
      case 'EntityDeleted': {
        const entity = entityKey(event.data.entity);
        for (const id of event.data.relationIds) tx.run('DELETE FROM memory_graph_relations WHERE relation_id = ?', [id]);
        tx.run('DELETE FROM memory_graph_entities WHERE entity = ?', [entity]);
        tx.run('DELETE FROM memory_graph_recalled WHERE entity = ?', [entity]);
        dropOrphans(tx);
        return;
      }
      case 'MemoryPurged':
        for (const id of event.data.relationIds) tx.run('DELETE FROM memory_graph_relations WHERE relation_id = ?', [id]);
        dropOrphans(tx);
        return;
      case 'MergeProposed':
        tx.run('INSERT OR IGNORE INTO memory_graph_merge_pairs (a, b) VALUES (?, ?)', [event.data.a, event.data.b]);
        return;
      case 'RelationReviewed':
        tx.run('INSERT OR IGNORE INTO memory_graph_reviewed (relation_id) VALUES (?)', [event.data.relationId]);
        return;
      case 'EntityRecalled':
        tx.run('INSERT OR IGNORE INTO memory_graph_recalled (entity, turn) VALUES (?, ?)', [entityKey(event.data.entity), event.data.turn]);
        return;
    }
  },
  view: (tx) => ({
    entities: tx.get<{ n: number }>('SELECT count(*) AS n FROM memory_graph_entities')?.n ?? 0,
    relations: tx.get<{ n: number }>('SELECT count(*) AS n FROM memory_graph_relations')?.n ?? 0,
  }),
});

export type RelationRow = Readonly<{
  relation_id: string;
  subject: string;
  predicate: string;
  object: string;
  confidence: number;
  sentence: string | null;
  source_events: string;
  cites: string;
  /** When what it stands for was said (when it was written, for triples that do not say). */
  happened_at: number;
}>;

const RELATION_COLUMNS = 'relation_id, subject, predicate, object, confidence, sentence, source_events, cites, happened_at';

/**
 * Relations reachable from the seed entities within `depth` hops (breadth first), nearest first,
 * then by confidence. Deterministic for the same graph.
 */
/**
 * The relations within `depth` hops of the seeds, each with the hop it was first found at.
 * `without`: a predicate whose relations the walk neither returns nor follows (recall leaves out
 * `said`: a speaker says thousands of things, and walking them reads the whole graph).
 */
export const graphNeighbourhood = (
  tx: ReadModelTx,
  seeds: readonly string[],
  depth = 2,
  { without }: { without?: string } = {},
): { relation: RelationRow; hops: number }[] => {
  const seen = new Set(seeds.map(entityKey));
  let frontier = [...seen];
  const found = new Map<string, { relation: RelationRow; hops: number }>();
  for (let hop = 1; hop <= depth && frontier.length > 0; hop++) {
    const marks = frontier.map(() => '?').join(',');
    const rows = tx.all<RelationRow>(
      `SELECT ${RELATION_COLUMNS} FROM memory_graph_relations WHERE (subject IN (${marks}) OR object IN (${marks}))${without === undefined ? '' : ' AND predicate <> ?'} ORDER BY confidence DESC, relation_id`,
      [...frontier, ...frontier, ...(without === undefined ? [] : [without])],
    );
    const next: string[] = [];
    for (const relation of rows) {
      if (!found.has(relation.relation_id)) found.set(relation.relation_id, { relation, hops: hop });
      for (const end of [relation.subject, relation.object]) {
        if (!seen.has(end)) {
          seen.add(end);
          next.push(end);
        }
      }
    }
    frontier = next;
  }
  return [...found.values()];
};

export const allRelations = (tx: ReadModelTx): RelationRow[] =>
  tx.all<RelationRow>(`SELECT ${RELATION_COLUMNS} FROM memory_graph_relations ORDER BY relation_id`);

/** The relations with these ids (in id order; unknown ids are skipped). */
export const relationsById = (tx: ReadModelTx, ids: readonly string[]): RelationRow[] =>
  ids.length === 0
    ? []
    : tx.all<RelationRow>(
        `SELECT ${RELATION_COLUMNS} FROM memory_graph_relations WHERE relation_id IN (${ids.map(() => '?').join(',')}) ORDER BY relation_id`,
        [...ids],
      );

export const entities = (tx: ReadModelTx): { entity: string; name: string }[] =>
  tx.all('SELECT entity, name FROM memory_graph_entities ORDER BY entity');

export const recalledInTurn = (tx: ReadModelTx, turn: string): Set<string> =>
  new Set(tx.all<{ entity: string }>('SELECT entity FROM memory_graph_recalled WHERE turn = ?', [turn]).map((r) => r.entity));

/** Entity pairs proposed for merging before (each pair is considered once), as `a|b`. */
export const consideredMergePairs = (tx: ReadModelTx): Set<string> =>
  new Set(tx.all<{ a: string; b: string }>('SELECT a, b FROM memory_graph_merge_pairs').map((r) => `${r.a}|${r.b}`));

/** Relations the review loop has read (each is read once). */
export const reviewedRelations = (tx: ReadModelTx): Set<string> =>
  new Set(tx.all<{ relation_id: string }>('SELECT relation_id FROM memory_graph_reviewed').map((r) => r.relation_id));

/** An entity by any of its spellings (matched on its key). */
export const entityNamed = (tx: ReadModelTx, name: string): { entity: string; name: string } | undefined =>
  tx.get('SELECT entity, name FROM memory_graph_entities WHERE entity = ?', [entityKey(name)]);

/** One relation by id. */
export const relationById = (tx: ReadModelTx, relationId: string): RelationRow | undefined => relationsById(tx, [relationId])[0];

/** Every relation with the entity as subject or object, by id. */
export const relationsTouching = (tx: ReadModelTx, entity: string): string[] =>
  tx
    .all<{ relation_id: string }>('SELECT relation_id FROM memory_graph_relations WHERE subject = ? OR object = ? ORDER BY relation_id', [
      entity,
      entity,
    ])
    .map((r) => r.relation_id);

export const graphCounts = (tx: ReadModelTx): { entities: number; relations: number } => ({
  entities: tx.get<{ n: number }>('SELECT count(*) AS n FROM memory_graph_entities')?.n ?? 0,
  relations: tx.get<{ n: number }>('SELECT count(*) AS n FROM memory_graph_relations')?.n ?? 0,
});

/** Stored entity names near `name` (containing it, contained in it, or a few edits away), nearest first. */
export const closeEntityNames = (tx: ReadModelTx, name: string, limit = 5): string[] => {
  const key = entityKey(name);
  const threshold = Math.max(2, Math.floor(key.length / 3));
  return entities(tx)
    .map((e) => ({ name: e.name, distance: e.entity.includes(key) || key.includes(e.entity) ? 0 : editDistance(key, e.entity) }))
    .filter((e) => e.distance <= threshold)
    .sort((a, b) => a.distance - b.distance || a.name.localeCompare(b.name))
    .slice(0, limit)
    .map((e) => e.name);
};
