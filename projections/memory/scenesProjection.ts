/**
 * Scenes: the recurring situations the conversation happens in (channel, peer, tools, topic,
 * time of day), with their strength and the context events that took place in each. It applies
 * the scene actor's decisions; it never re-decides.
 */
import { defineProjection, type ReadModelTx } from '../projection.ts';

export const scenesProjection = defineProjection({
  name: 'memory_scenes',
  version: 2,
  handles: ['SceneCreated', 'SceneJoined', 'SceneCandidateNoted'],
  tables: [
    {
      name: 'memory_scenes_scenes',
      ddl: `CREATE TABLE memory_scenes_scenes (
        scene_id TEXT PRIMARY KEY, kind TEXT NOT NULL, key TEXT, features TEXT NOT NULL, strength REAL NOT NULL,
        created_at REAL NOT NULL, last_seen REAL NOT NULL, occurrences INTEGER NOT NULL, created_seq INTEGER NOT NULL
      ) WITHOUT ROWID`,
    },
    {
      name: 'memory_scenes_candidates',
      ddl: 'CREATE TABLE memory_scenes_candidates (candidate_id TEXT PRIMARY KEY, fingerprint TEXT NOT NULL, at REAL NOT NULL, seq INTEGER NOT NULL) WITHOUT ROWID',
    },
    {
      /** The next number of a `scene:<n>` / `candidate:<n>` id. */
      name: 'memory_scenes_counter',
      ddl: 'CREATE TABLE memory_scenes_counter (next INTEGER NOT NULL)',
    },
    {
      name: 'memory_scenes_members',
      ddl: 'CREATE TABLE memory_scenes_members (scene_id TEXT NOT NULL, event_id TEXT NOT NULL, PRIMARY KEY (scene_id, event_id)) WITHOUT ROWID',
    },
  ],
  evolve(tx, event) {
    const bump = () => {
      if (!tx.get('SELECT next FROM memory_scenes_counter')) tx.run('INSERT INTO memory_scenes_counter (next) VALUES (1)');
      tx.run('UPDATE memory_scenes_counter SET next = next + 1');
    };
    if (event.type === 'SceneCandidateNoted') {
      const { candidateId, fingerprint, at, droppedCandidate } = event.data;
      if (droppedCandidate) tx.run('DELETE FROM memory_scenes_candidates WHERE candidate_id = ?', [droppedCandidate]);
      tx.run('INSERT INTO memory_scenes_candidates (candidate_id, fingerprint, at, seq) VALUES (?, ?, ?, ?)', [
        candidateId,
        JSON.stringify(fingerprint),
        at,
        event.seq,
      ]);
      bump();
      return;
    }
    const d = event.data;
    if (event.type === 'SceneCreated') {
      tx.run(
        'INSERT INTO memory_scenes_scenes (scene_id, kind, key, features, strength, created_at, last_seen, occurrences, created_seq) VALUES (?, ?, ?, ?, ?, ?, ?, 1, ?)',
        [d.sceneId, event.data.kind, event.data.key ?? null, JSON.stringify(d.features), d.strength, d.at, d.at, event.seq],
      );
      if (event.data.fromCandidate) tx.run('DELETE FROM memory_scenes_candidates WHERE candidate_id = ?', [event.data.fromCandidate]);
      if (event.data.kind === 'emergent') bump();
    } else {
      tx.run(
        'UPDATE memory_scenes_scenes SET strength = ?, features = ?, last_seen = ?, occurrences = occurrences + 1 WHERE scene_id = ?',
        [d.strength, JSON.stringify(d.features), d.at, d.sceneId],
      );
    }
    if (d.eventId) tx.run('INSERT OR IGNORE INTO memory_scenes_members (scene_id, event_id) VALUES (?, ?)', [d.sceneId, d.eventId]);
  },
  view: (tx) => tx.all('SELECT scene_id, kind, key, strength, occurrences FROM memory_scenes_scenes ORDER BY scene_id'),
});

export type SceneRow = Readonly<{
  scene_id: string;
  kind: 'declared' | 'emergent';
  key: string | null;
  features: string;
  strength: number;
  created_at: number;
  last_seen: number;
  occurrences: number;
}>;

/** Scenes in the order they were created (the order the scene actor compares them in). */
export const scenes = (tx: ReadModelTx): SceneRow[] =>
  tx.all<SceneRow>(
    'SELECT scene_id, kind, key, features, strength, created_at, last_seen, occurrences FROM memory_scenes_scenes ORDER BY created_seq',
  );

export type SceneCandidateRow = Readonly<{ candidate_id: string; fingerprint: string; at: number }>;

/** Candidates in the order they were noted. */
export const sceneCandidates = (tx: ReadModelTx): SceneCandidateRow[] =>
  tx.all<SceneCandidateRow>('SELECT candidate_id, fingerprint, at FROM memory_scenes_candidates ORDER BY seq');

/** The next number of a scene or candidate id. */
export const nextSceneNumber = (tx: ReadModelTx): number => tx.get<{ next: number }>('SELECT next FROM memory_scenes_counter')?.next ?? 1;

/** The context events that happened in each of these scenes. */
export const sceneMembers = (tx: ReadModelTx, sceneIds: readonly string[]): Map<string, string[]> => {
  const members = new Map<string, string[]>();
  if (sceneIds.length === 0) return members;
  for (const { scene_id, event_id } of tx.all<{ scene_id: string; event_id: string }>(
    `SELECT scene_id, event_id FROM memory_scenes_members WHERE scene_id IN (${sceneIds.map(() => '?').join(',')}) ORDER BY scene_id, event_id`,
    [...sceneIds],
  )) {
    members.set(scene_id, [...(members.get(scene_id) ?? []), event_id]);
  }
  return members;
};
