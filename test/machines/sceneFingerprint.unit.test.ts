/**
 * Scenes: fingerprints and their weighted similarity, declared keys, and the lifecycle fold
 * (candidate on the 1st occurrence, created on the 2nd, join at ≥ 0.5, recall at ≥ 0.35,
 * declared scenes never absorb a turn's fingerprint, strength halves per half-life).
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  decideScene,
  declaredSceneFeatures,
  DEFAULT_SCENE_HALF_LIFE_MS,
  evolveScene,
  fingerprintOf,
  initialSceneState,
  SceneKeyError,
  scenesToRecall,
  similarity,
  strengthAt,
  timeOfDayOf,
  TIMES_OF_DAY,
  type SceneDecision,
  type SceneFeatures,
  type SceneObservation,
  type SceneState,
} from '../../machines/memory/index.ts';

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const f = (parts: Partial<SceneFeatures>): SceneFeatures => ({ tools: [], topic: [], ...parts });
const names = (n: number, prefix: string) => Array.from({ length: n }, (_, i) => `${prefix}${i}`);

/** Given observations, when folded one by one: the final state and every decision. */
const run = (observations: readonly SceneObservation[], state: SceneState = initialSceneState) => {
  const decisions: SceneDecision[] = [];
  for (const observation of observations) {
    const step = decideScene(state, observation);
    decisions.push(...step.decisions);
    state = step.state;
  }
  return { state, decisions, types: decisions.map((d) => d.type) };
};

describe('fingerprintOf and time of day', () => {
  it('buckets local hours: night [0,6), morning [6,12), afternoon [12,18), evening [18,24)', () => {
    expect([0, 5, 6, 11, 12, 17, 18, 23].map((h) => timeOfDayOf(h * HOUR))).toEqual([
      'night',
      'night',
      'morning',
      'morning',
      'afternoon',
      'afternoon',
      'evening',
      'evening',
    ]);
    expect(timeOfDayOf(23 * HOUR, 8 * 60)).toBe('morning'); // 23:00 UTC is 07:00 at UTC+8
    expect(timeOfDayOf(2 * HOUR, -5 * 60)).toBe('evening'); // 02:00 UTC is 21:00 the day before at UTC-5
    expect(timeOfDayOf(-1)).toBe('evening');
  });

  it('normalises the turn', () => {
    expect(
      fingerprintOf({ channel: ' qq ', peer: 'group_1', tools: ['web', 'cmd', 'web'], topic: ['Go', 'go', ' Rust '], at: 13 * HOUR }),
    ).toEqual({ channel: 'qq', peer: 'group_1', tools: ['cmd', 'web'], topic: ['go', 'rust'], timeOfDay: 'afternoon' });
    expect(fingerprintOf({ channel: '', at: 0 })).toEqual({ tools: [], topic: [], timeOfDay: 'night' });
  });
});

describe('similarity', () => {
  it('weights channel 1.0, peer 1.0, tools 0.8, topic 0.4, time 0.2 over the features either side has', () => {
    const full = f({ channel: 'qq', peer: 'g1', tools: ['a'], topic: ['x'], timeOfDay: 'morning' });
    expect(similarity(full, full)).toBe(1);
    expect(similarity(full, { ...full, channel: 'web' })).toBeCloseTo(2.4 / 3.4, 12);
    expect(similarity(full, { ...full, tools: ['a', 'b'] })).toBeCloseTo((3.4 - 0.4) / 3.4, 12);
    expect(similarity(full, { ...full, timeOfDay: 'night' })).toBeCloseTo(3.2 / 3.4, 12);
    expect(similarity(f({ channel: 'qq', peer: 'g1' }), full)).toBeCloseTo(2 / 3.4, 12);
    expect(similarity(f({}), f({}))).toBe(0);
  });

  it('property: symmetric and in [0, 1]', () => {
    const features = fc.record({
      channel: fc.option(fc.constantFrom('qq', 'web'), { nil: undefined }),
      peer: fc.option(fc.constantFrom('g1', 'g2'), { nil: undefined }),
      tools: fc.array(fc.constantFrom('a', 'b', 'c'), { maxLength: 4 }),
      topic: fc.array(fc.constantFrom('x', 'y', 'z'), { maxLength: 4 }),
      timeOfDay: fc.option(fc.constantFrom(...TIMES_OF_DAY), { nil: undefined }),
    });
    fc.assert(
      fc.property(features, features, (x, y) => {
        const s = similarity(x, y);
        expect(s).toBe(similarity(y, x));
        expect(s).toBeGreaterThanOrEqual(0);
        expect(s).toBeLessThanOrEqual(1);
      }),
      { numRuns: 1000 },
    );
  });
});

describe('declaredSceneFeatures', () => {
  it('reads chan/peer/tools/topic/time segments from the key only', () => {
    expect(declaredSceneFeatures('chan:qq/peer:group_1')).toEqual({ channel: 'qq', peer: 'group_1', tools: [], topic: [] });
    expect(declaredSceneFeatures('chan:web/tools:b,a/topic:Go/time:evening')).toEqual({
      channel: 'web',
      tools: ['a', 'b'],
      topic: ['go'],
      timeOfDay: 'evening',
    });
  });

  it('refuses unknown segments with a typed error naming the valid ones', () => {
    const error = (() => {
      try {
        declaredSceneFeatures('chan:qq/room:1');
      } catch (e) {
        return e;
      }
    })();
    expect(error).toBeInstanceOf(SceneKeyError);
    expect(error).toMatchObject({ code: 'SCENE_KEY_INVALID', key: 'chan:qq/room:1' });
    expect((error as Error).message).toContain("unknown segment 'room'");
    expect((error as Error).message).toContain('chan, peer, tools, topic, time');
    for (const bad of ['', 'chan', 'chan:', 'chan:qq/chan:wx', 'time:noon', ':qq'])
      expect(() => declaredSceneFeatures(bad)).toThrow(SceneKeyError);
  });
});

describe('decideScene: emergent scenes', () => {
  const turn = f({ channel: 'qq', peer: 'g1', tools: ['search'], topic: ['go'], timeOfDay: 'morning' });

  it('creates a scene on the 2nd occurrence of a fingerprint, not the 1st', () => {
    const first = run([{ fingerprint: turn, at: 0 }]);
    expect(first.types).toEqual(['SceneCandidateNoted']);
    expect(first.state.scenes).toEqual([]);
    const second = run([{ fingerprint: turn, at: HOUR }], first.state);
    expect(second.types).toEqual(['SceneCreated']);
    expect(second.state.scenes).toHaveLength(1);
    expect(second.state.scenes[0]).toMatchObject({ id: 'scene:2', kind: 'emergent', features: turn, createdAt: HOUR });
    expect(second.state.candidates).toEqual([]);
    expect(run([{ fingerprint: turn, at: 2 * HOUR }], second.state).types).toEqual(['SceneJoined']);
  });

  it('a dissimilar second turn is another candidate', () => {
    const other = f({ channel: 'web', peer: 'u9', tools: ['draw'], topic: ['art'], timeOfDay: 'night' });
    const { types, state } = run([
      { fingerprint: turn, at: 0 },
      { fingerprint: other, at: 1 },
    ]);
    expect(types).toEqual(['SceneCandidateNoted', 'SceneCandidateNoted']);
    expect(state.candidates).toHaveLength(2);
  });

  it('joins at similarity 0.5 exactly, and absorbs the turn; 0.357 does not join', () => {
    const a = f({ channel: 'qq', peer: 'a' });
    const half = f({ channel: 'qq', peer: 'b' });
    const below = f({ channel: 'qq', peer: 'c', tools: ['x'] });
    expect(similarity(a, half)).toBe(0.5);
    expect(similarity(half, below)).toBeLessThan(0.5);
    const created = run([
      { fingerprint: a, at: 0 },
      { fingerprint: a, at: 0 },
    ]).state;
    const joined = run([{ fingerprint: half, at: 0 }], created);
    expect(joined.decisions).toEqual([
      { type: 'SceneJoined', data: { sceneId: 'scene:2', similarity: 0.5, strength: 3, features: half, at: 0 } },
    ]);
    expect(joined.state.scenes[0]?.features).toEqual(half);
    expect(run([{ fingerprint: below, at: 0 }], joined.state).types).toEqual(['SceneCandidateNoted']);
  });

  it('a candidate at similarity 0.5 exactly is a second occurrence', () => {
    const { types } = run([
      { fingerprint: f({ channel: 'qq', peer: 'a' }), at: 0 },
      { fingerprint: f({ channel: 'qq', peer: 'b' }), at: 0 },
    ]);
    expect(types).toEqual(['SceneCandidateNoted', 'SceneCreated']);
  });

  it('keeps at most maxCandidates, dropping the oldest', () => {
    let state = initialSceneState;
    for (const [i, channel] of ['c1', 'c2', 'c3'].entries()) {
      state = decideScene(state, { fingerprint: f({ channel }), at: i }, { maxCandidates: 2 }).state;
    }
    expect(state.candidates.map((c) => c.fingerprint.channel)).toEqual(['c2', 'c3']);
  });

  it('replaying the decisions with evolveScene rebuilds the state', () => {
    const other = f({ channel: 'web', peer: 'u9' });
    const { state, decisions } = run(
      [turn, other, turn, other, turn].map((fingerprint, i) => ({
        fingerprint,
        at: i * HOUR,
        ...(i === 3 ? { declaredKey: 'chan:web' } : {}),
      })),
    );
    expect(decisions.reduce(evolveScene, initialSceneState)).toEqual(state);
  });
});

describe('decideScene: declared scenes', () => {
  const key = 'chan:qq/peer:group_1';
  const turn = (topic: string) => f({ channel: 'qq', peer: 'group_1', tools: ['search'], topic: [topic], timeOfDay: 'morning' });

  it('is created at once from the key, while the turn goes through clustering too', () => {
    const { decisions, state } = run([{ fingerprint: turn('go'), at: 0, declaredKey: key }]);
    expect(decisions.map((d) => d.type)).toEqual(['SceneCreated', 'SceneCandidateNoted']);
    expect(state.scenes).toEqual([
      { id: `declared:${key}`, kind: 'declared', key, features: declaredSceneFeatures(key), strength: 1, createdAt: 0, lastSeen: 0 },
    ]);
  });

  it('never absorbs a turn: joining keeps the key-only features', () => {
    const { state, decisions } = run(['go', 'rust', 'go'].map((topic, i) => ({ fingerprint: turn(topic), at: i, declaredKey: key })));
    const declared = state.scenes.find((s) => s.kind === 'declared');
    expect(declared?.features).toEqual({ channel: 'qq', peer: 'group_1', tools: [], topic: [] });
    expect(declared?.strength).toBeCloseTo(3, 6);
    const joins = decisions.filter((d) => d.type === 'SceneJoined' && d.data.sceneId === `declared:${key}`);
    expect(joins.map((d) => (d.type === 'SceneJoined' ? d.data.features : undefined))).toEqual([declared?.features, declared?.features]);
    // so a later turn of that channel and peer matches it at 2/3.4, not close to 1.0
    expect(similarity(declared!.features, turn('go'))).toBeCloseTo(2 / 3.4, 12);
  });

  it('is not joined by clustering, so narrower scenes still grow in the same channel', () => {
    const { state } = run(['go', 'go'].map((topic, i) => ({ fingerprint: turn(topic), at: i, declaredKey: key })));
    expect(state.scenes.map((s) => s.kind)).toEqual(['declared', 'emergent']);
    expect(state.scenes.find((s) => s.kind === 'emergent')?.features).toEqual(turn('go'));
  });

  it('refuses an unreadable key', () => {
    expect(() => decideScene(initialSceneState, { fingerprint: turn('go'), at: 0, declaredKey: 'room:1' })).toThrow(SceneKeyError);
  });
});

describe('strength and recall', () => {
  it('halves at one half-life (default seven days) and never grows', () => {
    const scene = { strength: 4, lastSeen: 1_000 };
    expect(DEFAULT_SCENE_HALF_LIFE_MS).toBe(7 * DAY);
    expect(strengthAt(scene, 1_000 + 7 * DAY)).toBe(2);
    expect(strengthAt(scene, 1_000 + 14 * DAY)).toBe(1);
    expect(strengthAt(scene, 1_000 + HOUR, HOUR)).toBe(2);
    expect(strengthAt(scene, 0)).toBe(4);
  });

  it('a join adds 1 to the decayed strength', () => {
    const fp = f({ channel: 'qq' });
    const created = run([
      { fingerprint: fp, at: 0 },
      { fingerprint: fp, at: 0 },
    ]).state; // strength 2
    const joined = run([{ fingerprint: fp, at: 7 * DAY }], created).state;
    expect(joined.scenes[0]).toMatchObject({ strength: 2, lastSeen: 7 * DAY });
  });

  it('recalls at similarity 0.35 exactly, not below', () => {
    const shared = names(7, 's');
    const sceneTools = [...shared, ...names(13, 'x')];
    const state: SceneState = {
      ...initialSceneState,
      scenes: [{ id: 'scene:1', kind: 'emergent', features: f({ tools: sceneTools }), strength: 1, createdAt: 0, lastSeen: 0 }],
    };
    expect(similarity(f({ tools: sceneTools }), f({ tools: shared }))).toBe(0.35);
    expect(scenesToRecall(state, f({ tools: shared }), 0)).toHaveLength(1);
    expect(similarity(f({ tools: sceneTools }), f({ tools: shared.slice(1) }))).toBeLessThan(0.35);
    expect(scenesToRecall(state, f({ tools: shared.slice(1) }), 0)).toEqual([]);
  });

  it('orders by similarity × decayed strength', () => {
    const fp = f({ channel: 'qq', peer: 'g1' });
    const scene = (id: string, features: SceneFeatures, strength: number, lastSeen: number) => ({
      id,
      kind: 'emergent' as const,
      features,
      strength,
      createdAt: 0,
      lastSeen,
    });
    const state: SceneState = {
      ...initialSceneState,
      scenes: [
        scene('scene:1', fp, 4, 0), // sim 1, decayed to 1 at 14 days → 1
        scene('scene:2', f({ channel: 'qq', peer: 'g2' }), 3, 14 * DAY), // sim 0.5, strength 3 → 1.5
        scene('scene:3', fp, 1.5, 14 * DAY), // sim 1, strength 1.5 → 1.5, ties broken by similarity
        scene('scene:4', f({ channel: 'web', peer: 'g2' }), 100, 14 * DAY), // sim 0 → not recalled
      ],
    };
    const recalled = scenesToRecall(state, fp, 14 * DAY);
    expect(recalled.map((r) => [r.scene.id, r.score])).toEqual([
      ['scene:3', 1.5],
      ['scene:2', 1.5],
      ['scene:1', 1],
    ]);
  });
});
