/**
 * The memory tiers over a real log: inputs enter L1, the context actor sinks what is beyond
 * the protected recent events, cold recall is Peek then Restore + Remove, idle docs are
 * distilled into the graph, merges are proposed; and rebuilding the memory read models from
 * the log gives the same checksums as the live ones after all of it.
 */
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { SqliteEventStore } from '../../adapters/sqlite/sqliteEventStore.ts';
import { createDefaultCatalog, MEMORY_STREAM, SequentialIds, VirtualClock } from '../../events/index.ts';
import { openMemory } from '../../actors/memory/openMemory.ts';
import { verifyProjections } from '../../actors/replay/verifyProjections.ts';
import { coldDocs, contextOf, memoryProjections } from '../../projections/index.ts';
import { SqliteReadModelTx } from '../../actors/projections/sqliteReadModelTx.ts';
import { useOpenStores, useTempDir } from '../support/tempDir.ts';
import type { EmbeddingProvider } from '../../adapters/embeddings/embeddingProvider.ts';
import { VectorCache } from '../../adapters/embeddings/vectorCache.ts';
import { openDatabase } from '../../adapters/sqlite/openDatabase.ts';
import type { DenseRecall, MemoryOptions } from '../../actors/memory/openMemory.ts';
import { parseVerdict, type MergeJudge, type RelationJudge } from '../../actors/memory/mergeJudge.ts';
import { replayMemory } from '../../actors/memory/replayMemory.ts';

const tempDir = useTempDir();
const stores = useOpenStores();

const HOUR = 3_600_000;
const SCOPE = 'chat:test';

/** A dense space where 'car' and 'automobile' are the same direction: what keywords cannot see. */
const synonymProvider = () => {
  const calls: string[][] = [];
  const axis = (word: string) => (['car', 'automobile', 'vehicle'].includes(word) ? 0 : ['soup', 'lunch'].includes(word) ? 1 : 2);
  const provider: EmbeddingProvider = {
    fingerprint: 'test-synonyms-v1',
    dimensions: 3,
    modalities: ['text'],
    embedTexts: async (texts) => {
      calls.push([...texts]);
      return texts.map((t) => {
        const v = new Float32Array(3);
        for (const w of t.toLowerCase().match(/[a-z]+/g) ?? []) v[axis(w)]! += 1;
        const n = Math.hypot(...v) || 1;
        return v.map((x) => x / n);
      });
    },
  };
  return { provider, calls };
};

const setup = async (protectRecent = 3, dense?: DenseRecall, judges: Pick<MemoryOptions, 'mergeJudge' | 'relationJudge'> = {}) => {
  const clock = new VirtualClock(1_000_000);
  const store = SqliteEventStore.open(join(tempDir(), 'events.db'), {
    catalog: createDefaultCatalog(),
    clock,
    ids: new SequentialIds('e'),
  });
  stores.push(store);
  const memory = await openMemory(store, {
    ids: new SequentialIds('m'),
    clock,
    startAt: clock.now(),
    config: { prune: { protectRecent, keepTopK: 1, budgetTokens: 10_000 } },
    ...(dense ? { dense } : {}),
    ...judges,
  });
  const tx = new SqliteReadModelTx(store.db);
  const say = (text: string, at: number, cite: string) => memory.observe(SCOPE, { role: 'user', speaker: 'Ada', text, at, cites: [cite] });
  const types = async () => (await store.readStream(MEMORY_STREAM)).map((e) => e.type);
  return { clock, store, memory, tx, say, types };
};

describe('the memory', () => {
  it('keeps the protected recent events and the most relevant older one in L1, and sinks the rest to cold docs', async () => {
    const { tx, say } = await setup(3);
    const lines = ['I bought a red bicycle', 'The weather was grey', 'My sister plays chess', 'Lunch was soup', 'Where is my bicycle?'];
    for (const [i, line] of lines.entries()) await say(line, 1_000_000 + i * 1000, `D1:${i + 1}`);
    const context = contextOf(tx, SCOPE).map((r) => r.text);
    // The three most recent are protected; of the older ones the bicycle line is most relevant to the last input.
    expect(context).toEqual(['I bought a red bicycle', 'My sister plays chess', 'Lunch was soup', 'Where is my bicycle?']);
    expect(coldDocs(tx).map((d) => JSON.parse(d.cites))).toEqual([['D1:2']]);
  });

  it('recalls from cold context in two phases: a peek leaves L2 as it was; restore puts the events back at their times, then removes the doc', async () => {
    const { tx, say, memory, types } = await setup(2);
    await say('My passport is in the blue drawer', 1_000_000, 'D1:1');
    for (let i = 0; i < 4; i++) await say(`filler line number ${i}`, 1_001_000 + i, `D1:${i + 2}`);
    const before = coldDocs(tx);
    const [hit] = await memory.peekCold('passport drawer', 1, 1_002_000);
    expect(hit!.cites).toEqual(['D1:1']);
    expect(coldDocs(tx).map(({ accesses: _a, last_access_at: _l, ...rest }) => rest)).toEqual(
      before.map(({ accesses: _a, last_access_at: _l, ...rest }) => rest),
    );
    await memory.restoreCold(hit!.id.slice(4), 1_003_000);
    expect(coldDocs(tx).some((d) => d.doc_id === hit!.id.slice(4))).toBe(false);
    const restored = contextOf(tx, SCOPE).find((r) => r.text.includes('passport'))!;
    expect(restored.at).toBe(1_000_000);
    expect(contextOf(tx, SCOPE)[0]!.text).toContain('passport'); // back at its original position in time
    const log = await types();
    expect(log.indexOf('ContextEventsRestored')).toBeLessThan(log.indexOf('ColdDocRemoved'));
    expect(log.indexOf('ColdDocPeeked')).toBeLessThan(log.indexOf('ContextEventsRestored'));
  });

  it('distils idle cold docs into graph sentences and facts, proposes merges, and rebuilds to the same checksums', async () => {
    const { store, say, memory, tx } = await setup(2);
    await say('My name is Ada Lovelace and I live in London', 1_000_000, 'D1:1');
    await say('I like mathematics', 1_000_100, 'D1:2');
    await say('I like poetry too', 1_000_200, 'D1:3');
    await say('ada lovelace wrote notes', 1_000_300, 'D1:4');
    await say('An unrelated remark', 1_000_400, 'D1:5');
    await say('Another remark', 1_000_500, 'D1:6');
    const [hit] = await memory.peekCold('mathematics', 1, 1_000_600);
    await memory.restoreCold(hit!.id.slice(4), 1_000_700);
    expect(await memory.tick(1_000_700 + 80 * HOUR)).toContain('archive');
    expect(await memory.tick(1_000_700 + 80 * HOUR)).toEqual([]); // each loop fired once: none is due again
    const relations = tx.all<{ predicate: string; cites: string }>(
      'SELECT predicate, cites FROM memory_graph_relations ORDER BY relation_id',
    );
    expect(relations.some((r) => r.predicate === 'lives_in' && r.cites === '["D1:1"]')).toBe(true);
    expect(relations.filter((r) => r.predicate === 'said').length).toBeGreaterThan(0);
    const recalled = await memory.recall('Where does Ada live?', 5, SCOPE);
    expect(recalled.flatMap((h) => h.cites)).toContain('D1:1');

    const verdicts = await verifyProjections(store, store.db, memoryProjections());
    expect(verdicts.map((v) => [v.projection, v.status])).toEqual([
      ['memory_context', 'match'],
      ['memory_cold', 'match'],
      ['memory_graph', 'match'],
      ['memory_blocks', 'match'],
      ['memory_scenes', 'match'],
      ['memory_heartbeats', 'match'],
    ]);
  });

  it('with a dense space, the prune keeps what the input means, not only what it says, and replay re-decides it from the recorded scores', async () => {
    const lines = ['I drove my automobile to the coast', 'Soup for lunch again', 'The weather turned grey', 'Where did I park the car?'];
    const keptWith = async (dense?: DenseRecall) => {
      const { say, tx, store } = await setup(2, dense);
      for (const [i, line] of lines.entries()) await say(line, 1_000_000 + i * 100, `D1:${i + 1}`);
      return { context: contextOf(tx, SCOPE).map((r) => r.text), store };
    };
    // Keywords alone: 'car' shares no word with 'automobile', so the newer of the two older lines stays.
    expect((await keptWith()).context).toEqual(['Soup for lunch again', 'The weather turned grey', 'Where did I park the car?']);
    const { context, store } = await keptWith({ provider: synonymProvider().provider });
    expect(context).toEqual(['I drove my automobile to the coast', 'The weather turned grey', 'Where did I park the car?']);
    const last = (await store.readStream(MEMORY_STREAM)).filter((e) => e.type === 'ContextEventAppended').at(-1)!;
    expect((last.data as { relevance?: unknown[] }).relevance).toHaveLength(3);
    expect((await replayMemory(store, { prune: { protectRecent: 2, keepTopK: 1, budgetTokens: 10_000 } })).divergence).toBeNull();
  });

  it('with a dense space, recall fuses cosine and keyword ranks: a paraphrase is found, and vectors come from the cache', async () => {
    const { provider, calls } = synonymProvider();
    const cache = new VectorCache(openDatabase(join(tempDir(), 'vectors.db'), { durability: 'rebuildable' }));
    const { say, memory } = await setup(2, { provider, cache });
    await say('I drove my automobile to the coast', 1_000_000, 'D1:1');
    await say('Soup for lunch again', 1_000_100, 'D1:2');
    await say('The weather turned grey', 1_000_200, 'D1:3');
    const hits = await memory.recall('Where did I take the car?', 1, SCOPE);
    expect(hits[0]!.cites).toEqual(['D1:1']); // no shared keyword: found through the dense space
    const embedded = calls.flat().length;
    await memory.recall('Where did I take the car?', 1, SCOPE);
    expect(calls.flat().length - embedded).toBe(0); // the query's vector came from the cache
  });

  it('records scenes: a situation is a candidate first, a scene on its second occurrence, joined after; a restart continues', async () => {
    const { store, memory, tx, clock, types } = await setup(10);
    const decided = async (on: typeof memory, text: string, at: number) => {
      const before = (await types()).length;
      await on.observe(SCOPE, { role: 'user', speaker: 'Ada', text, at }, { channel: 'cli', peer: 'cli:ada' });
      return (await types()).slice(before).filter((t) => t.startsWith('Scene'));
    };
    expect(await decided(memory, 'plan the garden beds', 1_000_000)).toEqual(['SceneCandidateNoted']);
    expect(await decided(memory, 'plan the garden paths', 1_000_100)).toEqual(['SceneCreated']);
    expect(await decided(memory, 'garden beds again', 1_000_200)).toEqual(['SceneJoined']);
    expect(tx.all('SELECT scene_id, occurrences FROM memory_scenes_scenes')).toEqual([{ scene_id: 'scene:2', occurrences: 2 }]);

    const again = await openMemory(store, { ids: new SequentialIds('m2'), clock, startAt: clock.now() });
    expect(await decided(again, 'garden plan', 1_000_300)).toEqual(['SceneJoined']);
    const verdicts = await verifyProjections(store, store.db, memoryProjections());
    expect(verdicts.find((v) => v.projection === 'memory_scenes')?.status).toBe('match');
  });

  it("applies a model's merge verdict as recorded events, and considers each proposed pair once", async () => {
    const asked: string[] = [];
    const judge: MergeJudge = async (a, b) => {
      asked.push(`${a}|${b}`);
      return { decision: 'merge', reason: 'merge: same person' };
    };
    const { memory, tx, types } = await setup(10, undefined, { mergeJudge: judge });
    const commit = (subject: string, object: string) =>
      memory.record(
        [
          {
            type: 'MemoryCommitted',
            data: {
              triples: [{ relationId: `r-${subject}-${object}`, subject, predicate: 'likes', object, confidence: 1 }],
              by: 'tool',
              at: 1,
            },
          },
        ],
        1,
      );
    await commit('Ada Lovelace', 'tea');
    await commit('Ada Lovelace.', 'chess');
    await commit('Bob', 'coffee');
    expect(await memory.tick(1_000_000 + 2 * HOUR)).toContain('merge');
    await memory.settled();
    expect(asked).toEqual(['ada lovelace|ada lovelace.']);
    const merging = new Set(['MergeProposed', 'MergeDecided', 'EntitiesMerged']);
    expect((await types()).filter((t) => merging.has(t))).toEqual(['MergeProposed', 'MergeDecided', 'EntitiesMerged']);
    expect(tx.all('SELECT subject, object FROM memory_graph_relations ORDER BY object')).toEqual([
      { subject: 'ada lovelace', object: 'chess' },
      { subject: 'bob', object: 'coffee' },
      { subject: 'ada lovelace', object: 'tea' },
    ]);
    expect(await memory.tick(1_000_000 + 4 * HOUR)).toContain('merge');
    await memory.settled();
    expect(asked).toHaveLength(1);
  });

  it('reads a verdict conservatively: only a clear "merge" merges', () => {
    expect(parseVerdict('Merge — both are the same author').decision).toBe('merge');
    expect(parseVerdict('keep: different people').decision).toBe('keep');
    expect(parseVerdict('I am not sure').decision).toBe('keep');
  });

  it('reviews uncertain relations against their sentences once each: keep raises confidence, drop purges', async () => {
    const asked: string[] = [];
    const judge: RelationJudge = async (r) => {
      asked.push(r.relationId);
      return r.object === 'chess' ? { verdict: 'drop', reason: 'drop: says hate' } : { verdict: 'keep', reason: 'keep' };
    };
    const { memory, tx, types } = await setup(10, undefined, { relationJudge: judge });
    const triple = (relationId: string, object: string, sentence: string) => ({
      relationId,
      subject: 'ada',
      predicate: 'likes',
      object,
      confidence: 0.7,
      sentence,
    });
    await memory.record(
      [
        {
          type: 'MemoryCommitted',
          data: { triples: [triple('r1', 'tea', 'I like tea'), triple('r2', 'chess', 'I hate chess')], by: 'rule', at: 1 },
        },
      ],
      1,
    );
    expect(await memory.tick(1_000_000 + 2 * HOUR)).toContain('review');
    await memory.settled();
    expect(asked).toEqual(['r1', 'r2']);
    expect(tx.all('SELECT relation_id, confidence FROM memory_graph_relations')).toEqual([{ relation_id: 'r1', confidence: 1 }]);
    expect((await types()).filter((t) => t === 'RelationReviewed')).toHaveLength(2);
    expect(await memory.tick(1_000_000 + 4 * HOUR)).toContain('review');
    await memory.settled();
    expect(asked).toHaveLength(2);
  });

  it("weighs items from the scenes a situation recalls: the scene's members score 25% more, others do not change", async () => {
    const { memory } = await setup(10);
    const said = async (peer: string, text: string, at: number) => {
      const { eventId } = await memory.observe(SCOPE, { role: 'user', speaker: peer, text, at }, { channel: 'cli', peer });
      return eventId;
    };
    await said('alice', 'planting the garden beds', 1_000_000); // a candidate: the scene starts with the next one
    const alice2 = await said('alice', 'planting the garden paths', 1_000_100);
    const bob = await said('bob', 'garden tools are rusty', 1_000_200);
    const plain = await memory.recall('garden', 3, SCOPE);
    const inScene = await memory.recall('garden', 3, SCOPE, {
      channel: 'cli',
      peer: 'alice',
      text: 'planting the garden',
      at: 1_000_300,
    });
    const score = (hits: typeof plain, eventId: string) => hits.find((h) => h.sources?.includes(eventId))!.score;
    expect(score(inScene, alice2) / score(plain, alice2)).toBeCloseTo(1.25, 10);
    expect(score(inScene, bob)).toBe(score(plain, bob));
  });
});
