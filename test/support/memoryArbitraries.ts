/**
 * Generators for the memory deciders' properties: a scope's context in time order (unique
 * event and block ids, texts that state personal facts or not, scores with ties), prune
 * configurations whose budgets bind, cold docs, relations, merge and review verdicts, and
 * scene fingerprints drawn from small pools so similarities land on the thresholds.
 */
import fc from 'fast-check';
import type { ContextEventData } from '../../events/index.ts';
import type { ArchivableDoc, PruneConfig, ScoredContextEvent, SceneFeatures, TimeOfDay } from '../../machines/memory/index.ts';

/** Some state a personal fact (English, Chinese), some do not; lengths vary so token counts differ. */
export const SAID = [
  '',
  'hello',
  'I live in Paris.',
  'My name is Alice and I like green tea.',
  '我叫小明，我住在北京。',
  'I do not like rain.',
  'Where do you live?',
  'The meeting moved to Thursday afternoon, the room is on the third floor next to the kitchen.',
] as const;

const SPEAKERS = [undefined, 'alice', 'bob'] as const;

type EventSeed = Readonly<{ role: ContextEventData['role']; speaker: string | undefined; text: string; cited: boolean; media: boolean }>;

const eventSeedArb: fc.Arbitrary<EventSeed> = fc.record({
  role: fc.constantFrom<ContextEventData['role']>('user', 'agent', 'user', 'cold_storage', 'system'),
  speaker: fc.constantFrom(...SPEAKERS),
  text: fc.constantFrom(...SAID),
  cited: fc.boolean(),
  media: fc.boolean(),
});

/** Events `e<prefix><i>` at rising times, each block id unique. */
const eventsOf = (seeds: readonly EventSeed[], prefix = '', start = 1_000): ContextEventData[] =>
  seeds.map((s, i) => ({
    eventId: `e${prefix}${i}`,
    role: s.role,
    ...(s.speaker !== undefined ? { speaker: s.speaker } : {}),
    text: s.text,
    at: start + i * 60_000,
    ...(s.cited ? { cites: [`dia-${prefix}${i}`] } : {}),
    ...(s.media ? { blocks: [{ blockId: `b${prefix}${i}`, kind: 'media' as const, mime: 'image/png' }] } : {}),
  }));

/** Ties are common (the same few scores), so the older-first tie rule is exercised. */
const scoreArb = fc.oneof(fc.constantFrom(0, 0.25, 0.5, 1), fc.double({ min: 0, max: 1, noNaN: true }));

export const scoredContextArb: fc.Arbitrary<ScoredContextEvent[]> = fc
  .array(fc.tuple(eventSeedArb, scoreArb), { maxLength: 30 })
  .map((pairs) => {
    const events = eventsOf(pairs.map(([seed]) => seed));
    return events.map((event, i) => ({ event, score: pairs[i]![1] }));
  });

/** Budgets from a few tokens to more than any context here holds, so each rule binds sometimes. */
export const pruneConfigArb: fc.Arbitrary<PruneConfig> = fc.record({
  protectRecent: fc.integer({ min: 0, max: 12 }),
  keepTopK: fc.integer({ min: 0, max: 10 }),
  budgetTokens: fc.oneof(fc.integer({ min: 1, max: 60 }), fc.integer({ min: 1, max: 400 }), fc.constant(24_000)),
});

export const archivableDocsArb: fc.Arbitrary<ArchivableDoc[]> = fc
  .array(
    fc.record({
      scope: fc.constantFrom('cli:alice', 'qq:group_1'),
      text: fc.constantFrom(...SAID),
      cited: fc.boolean(),
      events: fc.array(eventSeedArb, { maxLength: 3 }),
    }),
    { maxLength: 5 },
  )
  .map((docs) =>
    docs.map((d, i) => ({
      docId: `c${i}`,
      scope: d.scope,
      text: d.text,
      cites: d.cited ? [`dia-c${i}`] : [],
      events: eventsOf(d.events, `${i}-`),
    })),
  );

export const saidEventsArb = fc
  .array(fc.record({ scope: fc.constantFrom('cli:alice', 'qq:group_1'), seed: eventSeedArb }), { maxLength: 8 })
  .map((rows) =>
    eventsOf(rows.map((r) => r.seed)).map((e, i) => ({
      eventId: e.eventId,
      scope: rows[i]!.scope,
      speaker: e.speaker ?? null,
      text: e.text,
      cites: e.cites ?? [],
      at: e.at,
    })),
  );

export const relationsArb = fc
  .array(
    fc.record({
      confidence: fc.constantFrom(0.5, 0.7, 0.8, 1),
      sentence: fc.constantFrom<string | null>(null, '', 'I live in Paris.'),
      predicate: fc.constantFrom('lives_in', 'said', 'likes'),
    }),
    { maxLength: 15 },
  )
  .map((rows) => rows.map((r, i) => ({ relationId: `r${i}`, ...r })));

export const atArb = fc.integer({ min: 0, max: 10_000_000 });

export const mergeVerdictArb = fc.record({
  a: fc.constantFrom('alice', 'e1'),
  b: fc.constantFrom('alice chen', 'e2'),
  decision: fc.constantFrom('merge' as const, 'keep' as const),
  reason: fc.constantFrom(undefined, 'same person'),
  at: atArb,
});

export const reviewVerdictArb = fc.record({
  relationId: fc.constantFrom('r1', 'r-c0-said'),
  verdict: fc.constantFrom('keep' as const, 'drop' as const),
  reason: fc.constantFrom('', 'the sentence says so'),
  at: atArb,
});

// ── scenes ───────────────────────────────────────────────────────────────────────────

const subset = (pool: readonly string[]) => fc.subarray([...pool]).map((xs) => [...xs].sort());

export const fingerprintArb: fc.Arbitrary<SceneFeatures> = fc
  .record({
    channel: fc.constantFrom(undefined, 'qq', 'web'),
    peer: fc.constantFrom(undefined, 'g1', 'g2'),
    tools: subset(['files', 'search', 'web']),
    topic: subset(['go', 'rust', 'tea']),
    timeOfDay: fc.constantFrom<TimeOfDay | undefined>(undefined, 'morning', 'evening'),
  })
  .map(({ channel, peer, timeOfDay, ...sets }) => ({
    ...(channel !== undefined ? { channel } : {}),
    ...(peer !== undefined ? { peer } : {}),
    ...sets,
    ...(timeOfDay !== undefined ? { timeOfDay } : {}),
  }));

export const DECLARED_KEYS = ['chan:qq/peer:g1', 'chan:web', 'topic:go,rust/time:evening'] as const;

/** Observations at rising times (gaps up to a few half-lives), now and then of a declared scene. */
export const observationsArb = fc
  .array(
    fc.record({
      fingerprint: fingerprintArb,
      gap: fc.oneof(fc.constant(0), fc.integer({ min: 0, max: 30 * 24 * 3_600_000 })),
      declaredKey: fc.oneof({ weight: 4, arbitrary: fc.constant(undefined) }, { weight: 1, arbitrary: fc.constantFrom(...DECLARED_KEYS) }),
    }),
    { maxLength: 25 },
  )
  .map((rows) => {
    let at = 0;
    return rows.map(({ fingerprint, gap, declaredKey }) => {
      at += gap;
      return { fingerprint, at, ...(declaredKey !== undefined ? { declaredKey } : {}) };
    });
  });
