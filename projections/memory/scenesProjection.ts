/**
 * Scenes: the recurring situations the conversation happens in (channel, peer, tools, topic,
 * time of day), with their strength and the context events that took place in each. It applies
 * the scene actor's decisions; it never re-decides.
 */
import { defineProjection, type ReadModelTx } from '../projection.ts';

export const scenesProjection = defineProjection({
  name: 'memory_scenes',
  version: 1,
  handles: ['SceneCreated', 'SceneJoined'],
  tables: [
    {
      name: 'memory_scenes_scenes',
      ddl: `CREATE TABLE memory_scenes_scenes (
        scene_id TEXT PRIMARY KEY, kind TEXT NOT NULL, key TEXT, features TEXT NOT NULL, strength REAL NOT NULL,
        created_at REAL NOT NULL, last_seen REAL NOT NULL, occurrences INTEGER NOT NULL
      ) WITHOUT ROWID`,
    },
    {
      name: 'memory_scenes_members',
      ddl: 'CREATE TABLE memory_scenes_members (scene_id TEXT NOT NULL, event_id TEXT NOT NULL, PRIMARY KEY (scene_id, event_id)) WITHOUT ROWID',
    },
  ],
  evolve(tx, event) {
    const d = event.data;
    if (event.type === 'SceneCreated') {
      tx.run(
        'INSERT INTO memory_scenes_scenes (scene_id, kind, key, features, strength, created_at, last_seen, occurrences) VALUES (?, ?, ?, ?, ?, ?, ?, 1)',
        [d.sceneId, event.data.kind, event.data.key ?? null, JSON.stringify(d.features), d.strength, d.at, d.at],
      );
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
  kind: string;
  key: string | null;
  features: string;
  strength: number;
  last_seen: number;
  occurrences: number;
}>;

export const scenes = (tx: ReadModelTx): SceneRow[] =>
  tx.all<SceneRow>('SELECT scene_id, kind, key, features, strength, last_seen, occurrences FROM memory_scenes_scenes ORDER BY scene_id');
