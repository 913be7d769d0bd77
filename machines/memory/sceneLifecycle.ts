/**
 * The scene lifecycle as a pure decider and fold: an observed turn joins a scene, creates one on
 * the second similar occurrence (minSceneEvidence = 2), or is noted as a candidate. Declared
 * scenes are keyed by their declared key and keep the features of that key forever.
 */
import { declaredSceneFeatures, similarity, type SceneFeatures } from './sceneFingerprint.ts';

/** Join (and candidate-matching) threshold from the spec. */
export const SCENE_JOIN_THRESHOLD = 0.5;
/** Recall threshold from the spec. */
export const SCENE_RECALL_THRESHOLD = 0.35;
/** The spec says scenes "decay by half-life" without a value; seven days is ours. */
export const DEFAULT_SCENE_HALF_LIFE_MS = 7 * 24 * 3_600_000;
/** Candidates kept at most; the oldest is dropped first. The spec gives no bound. */
export const DEFAULT_MAX_SCENE_CANDIDATES = 64;

export type Scene = Readonly<{
  /** `declared:<key>` or `scene:<n>`. */
  id: string;
  kind: 'declared' | 'emergent';
  /** The declared key, for declared scenes. */
  key?: string;
  features: SceneFeatures;
  /** Strength as of `lastSeen`; read it at another time with `strengthAt`. */
  strength: number;
  createdAt: number;
  lastSeen: number;
}>;

export type SceneCandidate = Readonly<{ id: string; fingerprint: SceneFeatures; at: number }>;

export type SceneState = Readonly<{
  scenes: readonly Scene[];
  candidates: readonly SceneCandidate[];
  /** Next number for `scene:<n>` / `candidate:<n>` ids. */
  nextSeq: number;
}>;

export const initialSceneState: SceneState = { scenes: [], candidates: [], nextSeq: 1 };

export type SceneObservation = Readonly<{ fingerprint: SceneFeatures; at: number; declaredKey?: string }>;

export type SceneDecision =
  | Readonly<{
      type: 'SceneCreated';
      data: Readonly<{
        sceneId: string;
        kind: Scene['kind'];
        key?: string;
        features: SceneFeatures;
        strength: number;
        at: number;
        /** The candidate this scene grew from (emergent scenes). */
        fromCandidate?: string;
        similarity?: number;
      }>;
    }>
  | Readonly<{
      type: 'SceneJoined';
      data: Readonly<{ sceneId: string; similarity: number; strength: number; features: SceneFeatures; at: number }>;
    }>
  | Readonly<{
      type: 'SceneCandidateNoted';
      data: Readonly<{ candidateId: string; fingerprint: SceneFeatures; at: number; droppedCandidate?: string }>;
    }>;

export type SceneOptions = Readonly<{ joinThreshold?: number; halfLifeMs?: number; maxCandidates?: number }>;

/**
 * `scene.strength` decayed from `lastSeen` to `at`: halves every `halfLifeMs`. Never grows
 * (a time before `lastSeen` reads as `lastSeen`).
 */
export const strengthAt = (scene: Pick<Scene, 'strength' | 'lastSeen'>, at: number, halfLifeMs = DEFAULT_SCENE_HALF_LIFE_MS): number =>
  scene.strength * 2 ** (-Math.max(0, at - scene.lastSeen) / halfLifeMs);

/**
 * Decide what an observed turn does to the scenes, and fold the decisions in.
 * With a `declaredKey` the declared scene for that key is joined (or created at once: a
 * declaration is explicit), *and* the fingerprint still goes through clustering, which only
 * ever looks at emergent scenes; so `decisions` has one or two entries, declared first.
 * Ties between equally similar scenes or candidates go to the older one.
 * Throws `SceneKeyError` for an unreadable declared key.
 */
export const decideScene = (
  state: SceneState,
  observation: SceneObservation,
  options: SceneOptions = {},
): { state: SceneState; decisions: SceneDecision[] } => {
  const decisions: SceneDecision[] = [];
  let next = state;
  if (observation.declaredKey !== undefined) {
    const decision = decideDeclared(next, observation, observation.declaredKey, options);
    decisions.push(decision);
    next = evolveScene(next, decision);
  }
  const decision = decideEmergent(next, observation, options);
  decisions.push(decision);
  return { state: evolveScene(next, decision), decisions };
};

const decideDeclared = (state: SceneState, { fingerprint, at }: SceneObservation, key: string, options: SceneOptions): SceneDecision => {
  const features = declaredSceneFeatures(key);
  const sceneId = `declared:${key}`;
  const scene = state.scenes.find((s) => s.id === sceneId);
  if (!scene) return { type: 'SceneCreated', data: { sceneId, kind: 'declared', key, features, strength: 1, at } };
  const strength = strengthAt(scene, at, options.halfLifeMs) + 1;
  return {
    type: 'SceneJoined',
    data: { sceneId, similarity: similarity(scene.features, fingerprint), strength, features: scene.features, at },
  };
};

const decideEmergent = (state: SceneState, { fingerprint, at }: SceneObservation, options: SceneOptions): SceneDecision => {
  const threshold = options.joinThreshold ?? SCENE_JOIN_THRESHOLD;
  const scene = bestOf(
    state.scenes.filter((s) => s.kind === 'emergent'),
    (s) => similarity(s.features, fingerprint),
  );
  if (scene && scene.score >= threshold) {
    const strength = strengthAt(scene.item, at, options.halfLifeMs) + 1;
    return { type: 'SceneJoined', data: { sceneId: scene.item.id, similarity: scene.score, strength, features: fingerprint, at } };
  }
  const candidate = bestOf(state.candidates, (c) => similarity(c.fingerprint, fingerprint));
  if (candidate && candidate.score >= threshold) {
    const strength = strengthAt({ strength: 1, lastSeen: candidate.item.at }, at, options.halfLifeMs) + 1;
    return {
      type: 'SceneCreated',
      data: {
        sceneId: `scene:${state.nextSeq}`,
        kind: 'emergent',
        features: fingerprint,
        strength,
        at,
        fromCandidate: candidate.item.id,
        similarity: candidate.score,
      },
    };
  }
  const max = options.maxCandidates ?? DEFAULT_MAX_SCENE_CANDIDATES;
  const dropped = state.candidates.length >= max ? state.candidates[0] : undefined;
  return {
    type: 'SceneCandidateNoted',
    data: { candidateId: `candidate:${state.nextSeq}`, fingerprint, at, ...(dropped ? { droppedCandidate: dropped.id } : {}) },
  };
};

const bestOf = <T>(items: readonly T[], score: (item: T) => number): { item: T; score: number } | undefined => {
  let best: { item: T; score: number } | undefined;
  for (const item of items) {
    const s = score(item);
    if (!best || s > best.score) best = { item, score: s };
  }
  return best;
};

/** Apply one decision to the state; replaying a run's decisions rebuilds its state. */
export const evolveScene = (state: SceneState, decision: SceneDecision): SceneState => {
  switch (decision.type) {
    case 'SceneCreated': {
      const { sceneId, kind, key, features, strength, at, fromCandidate } = decision.data;
      const scene: Scene = { id: sceneId, kind, ...(key !== undefined ? { key } : {}), features, strength, createdAt: at, lastSeen: at };
      return {
        scenes: [...state.scenes, scene],
        candidates: state.candidates.filter((c) => c.id !== fromCandidate),
        nextSeq: kind === 'emergent' ? state.nextSeq + 1 : state.nextSeq,
      };
    }
    case 'SceneJoined': {
      const { sceneId, strength, features, at } = decision.data;
      return { ...state, scenes: state.scenes.map((s) => (s.id === sceneId ? { ...s, strength, features, lastSeen: at } : s)) };
    }
    case 'SceneCandidateNoted': {
      const { candidateId, fingerprint, at, droppedCandidate } = decision.data;
      return {
        ...state,
        candidates: [...state.candidates.filter((c) => c.id !== droppedCandidate), { id: candidateId, fingerprint, at }],
        nextSeq: state.nextSeq + 1,
      };
    }
    default: {
      const unreachable: never = decision;
      return unreachable;
    }
  }
};

export type RecalledScene = Readonly<{ scene: Scene; similarity: number; strength: number; score: number }>;

/**
 * Scenes (declared and emergent) with similarity ≥ `recallThreshold` (0.35) to `fingerprint`,
 * ordered by similarity × strength decayed to `at` (descending), then similarity, then id.
 */
export const scenesToRecall = (
  state: SceneState,
  fingerprint: SceneFeatures,
  at: number,
  options: Readonly<{ recallThreshold?: number; halfLifeMs?: number }> = {},
): RecalledScene[] => {
  const threshold = options.recallThreshold ?? SCENE_RECALL_THRESHOLD;
  return state.scenes
    .map((scene) => {
      const sim = similarity(scene.features, fingerprint);
      const strength = strengthAt(scene, at, options.halfLifeMs);
      return { scene, similarity: sim, strength, score: sim * strength };
    })
    .filter((r) => r.similarity >= threshold)
    .sort((x, y) => y.score - x.score || y.similarity - x.similarity || (x.scene.id < y.scene.id ? -1 : x.scene.id > y.scene.id ? 1 : 0));
};
