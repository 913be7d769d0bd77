/**
 * Scenes as the memory reads them: the scene actor's state from the scenes read model, the
 * fingerprint of a situation (its channel, peer, tools, words as topic, time of day), and the
 * context events of the scenes a situation recalls, weighted for a recall.
 */
import type { SceneFeatures, Situation } from '../../events/index.ts';
import { fingerprintOf, scenesToRecall, type SceneState } from '../../machines/memory/index.ts';
import { nextSceneNumber, sceneCandidates, sceneMembers, scenes, type ReadModelTx } from '../../projections/index.ts';
import { tokenize } from './lexicon.ts';

/** Words of an input that make its scene's topic. */
const TOPIC_WORDS = 8;

export const situationFingerprint = (situation: Situation): SceneFeatures =>
  fingerprintOf({
    ...(situation.channel ? { channel: situation.channel } : {}),
    ...(situation.peer ? { peer: situation.peer } : {}),
    tools: situation.tools ?? [],
    topic: [...new Set(tokenize(situation.text))].slice(0, TOPIC_WORDS),
    at: situation.at,
  });

/** The scene actor's state, as the scenes read model holds it. */
export const sceneStateOf = (tx: ReadModelTx): SceneState => ({
  scenes: scenes(tx).map((r) => ({
    id: r.scene_id,
    kind: r.kind,
    ...(r.key !== null ? { key: r.key } : {}),
    features: JSON.parse(r.features) as SceneFeatures,
    strength: r.strength,
    createdAt: r.created_at,
    lastSeen: r.last_seen,
  })),
  candidates: sceneCandidates(tx).map((c) => ({ id: c.candidate_id, fingerprint: JSON.parse(c.fingerprint) as SceneFeatures, at: c.at })),
  nextSeq: nextSceneNumber(tx),
});

/** The context events of the scenes the situation recalls (similarity ≥ 0.35), each with its scene's weight relative to the best. */
export const sceneWeights = (tx: ReadModelTx, situation: Situation): Map<string, number> => {
  const recalled = scenesToRecall(sceneStateOf(tx), situationFingerprint(situation), situation.at);
  const top = recalled[0]?.score ?? 0;
  const members = sceneMembers(
    tx,
    recalled.map((r) => r.scene.id),
  );
  const weights = new Map<string, number>();
  for (const { scene, score } of recalled) {
    for (const eventId of members.get(scene.id) ?? []) weights.set(eventId, Math.max(weights.get(eventId) ?? 0, top > 0 ? score / top : 0));
  }
  return weights;
};
