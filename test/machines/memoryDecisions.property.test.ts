/**
 * The memory's decisions as properties, over random contexts, docs, relations and verdicts:
 * what sinks (one ContextEventsSunk holding a doc per sunk event, never a protected one, the
 * least relevant first, within the budget and no more than it needs), what an archive
 * distils (every doc, every block once, nothing said lost), the rule distiller's commits,
 * merge proposals, the merge and review verdicts, and a cold recall's two events. Every
 * event decided must pass the catalog, as the log would check it at append.
 * At least 200 runs each; `FC_RUNS=n` raises it.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createDefaultCatalog, type AnyEvent, type ContextEventData } from '../../events/index.ts';
import {
  decideArchive,
  decideMergeProposals,
  decidePrune,
  decideRestore,
  decideRules,
  distillPersonalFacts,
  mergeVerdictFacts,
  proposeMerges,
  nothingCanSink,
  reviewCandidates,
  reviewVerdictFacts,
  type PruneConfig,
  type ScoredContextEvent,
} from '../../machines/memory/index.ts';
import {
  archivableDocsArb,
  atArb,
  mergeVerdictArb,
  pruneConfigArb,
  relationsArb,
  reviewVerdictArb,
  saidEventsArb,
  scoredContextArb,
} from '../support/memoryArbitraries.ts';

const RUNS = Math.max(200, Number(process.env.FC_RUNS ?? 0));
const options = { numRuns: RUNS };
const catalog = createDefaultCatalog();

/** The log refuses at append what its catalog refuses: a decision must pass. */
const appendable = (events: readonly AnyEvent[]): void => {
  for (const e of events) expect(() => catalog.validate(e.type, e.data), `${e.type} ${JSON.stringify(e.data)}`).not.toThrow();
};

const tokensOf = (e: ContextEventData): number => Math.max(1, Math.ceil(e.text.length / 4));

/** The spec's protected recent events: N = min(configured, floor(budget / average tokens)). */
const protectedOf = (context: readonly ScoredContextEvent[], config: PruneConfig): number => {
  const average = Math.max(1, context.reduce((n, c) => n + tokensOf(c.event), 0) / context.length);
  return Math.min(config.protectRecent, Math.floor(config.budgetTokens / average), context.length);
};

/** More relevant first; among equals the newer first (so the older sinks first). */
const rank = (context: readonly ScoredContextEvent[], older: number) =>
  context
    .slice(0, older)
    .map((c, index) => ({ ...c, index }))
    .sort((x, y) => y.score - x.score || y.index - x.index);

describe('decidePrune (property)', () => {
  it('sinks in one decision a doc per event, never a protected one, least relevant first, within the budget and no more', () => {
    fc.assert(
      fc.property(scoredContextArb, pruneConfigArb, atArb, (context, config, at) => {
        const decided = decidePrune('cli:alice', context, config, at);
        expect(decidePrune('cli:alice', context, config, at), 'the same input decides the same').toEqual(decided);
        expect(decided.length).toBeLessThanOrEqual(1);
        if (
          nothingCanSink(
            context.map((c) => c.event),
            config,
          )
        )
          expect(decided, 'all protected: nothing sinks').toEqual([]);
        appendable(decided);
        const sunk = decided[0]?.data;
        if (sunk) {
          expect(sunk.scope).toBe('cli:alice');
          expect(sunk.at).toBe(at);
          expect(sunk.docs.length, 'a decision sinks something').toBeGreaterThan(0);
        }
        const docs = sunk?.docs ?? [];
        const byId = new Map(context.map((c, i) => [c.event.eventId, i]));
        const sunkIndexes = docs.map((d) => {
          expect(d.events, `doc ${d.docId} holds one event`).toHaveLength(1);
          const index = byId.get(d.events[0]!.eventId);
          expect(index, `doc ${d.docId} holds an event of the context`).toBeDefined();
          expect(d.events[0], 'the event as the context holds it').toEqual(context[index!]!.event);
          expect(d.docId).toBe(`d-${d.events[0]!.eventId}`);
          return index!;
        });
        expect(sunkIndexes, 'docs in time order, each event once').toEqual([...new Set(sunkIndexes)].sort((a, b) => a - b));

        if (context.length === 0) return;
        const n = protectedOf(context, config);
        const older = context.length - n;
        if (sunk) expect(sunk.protectedCount).toBe(n);
        expect(
          sunkIndexes.filter((i) => i >= older),
          `the ${n} most recent events are protected`,
        ).toEqual([]);

        const sinking = new Set(sunkIndexes);
        const ranked = rank(context, older);
        const kept = ranked.filter((c) => !sinking.has(c.index));
        expect(kept.length, 'older events kept for relevance').toBeLessThanOrEqual(Math.max(0, config.keepTopK));
        // What stays is a prefix of the ranking: nothing sinks while a less relevant (or equally relevant, older) one stays.
        expect(
          ranked.map((c) => !sinking.has(c.index)),
          'kept = the most relevant older events',
        ).toEqual(ranked.map((_, i) => i < kept.length));
        const keptTokens =
          context.slice(older).reduce((t, c) => t + tokensOf(c.event), 0) + kept.reduce((t, c) => t + tokensOf(c.event), 0);
        if (kept.length > 0) expect(keptTokens, 'what stays fits the budget').toBeLessThanOrEqual(config.budgetTokens);
        const next = ranked[kept.length];
        if (next && kept.length < config.keepTopK) {
          expect(keptTokens + tokensOf(next.event), `${next.event.eventId} sank though it fit the budget`).toBeGreaterThan(
            config.budgetTokens,
          );
        }
      }),
      options,
    );
  });
});

describe('decideArchive (property)', () => {
  it('distils every doc once: its facts, and what was said with every block exactly once', () => {
    fc.assert(
      fc.property(archivableDocsArb, atArb, (docs, at) => {
        const decided = decideArchive(docs, at);
        expect(decideArchive(docs, at)).toEqual(decided);
        appendable(decided);
        expect(decided.map((d) => d.data.docId)).toEqual(docs.map((d) => d.docId));
        const relationIds = decided.flatMap((d) => d.data.triples.map((t) => t.relationId));
        expect(new Set(relationIds).size, 'relation ids are unique').toBe(relationIds.length);
        docs.forEach((doc, i) => {
          const { triples } = decided[i]!.data;
          expect(decided[i]!.data.at).toBe(at);
          const said = triples.at(-1)!;
          const speaker = doc.events[0]?.speaker ?? doc.scope;
          expect(said).toMatchObject({ subject: speaker, predicate: 'said', object: doc.scope, confidence: 1, sentence: doc.text });
          const sources = doc.events.map((e) => e.eventId);
          for (const t of triples) {
            expect(t.sourceEventIds).toEqual(sources);
            expect(t.cites).toEqual(doc.cites);
            expect(t.happenedAt).toBe(doc.events[0]?.at);
          }
          const blocks = doc.events.flatMap((e) => e.blocks ?? []);
          expect(said.blocks ?? [], 'the said triple holds every block').toEqual(blocks);
          expect(
            triples.slice(0, -1).filter((t) => t.blocks),
            'no other triple holds a block',
          ).toEqual([]);
          const facts = doc.events.flatMap((e) => distillPersonalFacts(e.text, e.speaker ?? speaker));
          expect(triples.slice(0, -1).map((t) => [t.subject, t.predicate, t.object, t.sentence])).toEqual(
            facts.map((f) => [f.subject, f.predicate, String(f.object), f.sentence]),
          );
        });
      }),
      options,
    );
  });
});

describe('decideRules (property)', () => {
  it('commits, in one event, the facts each speaker stated, each pointing at its event', () => {
    fc.assert(
      fc.property(saidEventsArb, atArb, (said, at) => {
        const decided = decideRules(said, at);
        appendable(decided);
        const expected = said.flatMap((r) =>
          distillPersonalFacts(r.text, r.speaker ?? r.scope).map((f) => ({
            source: r.eventId,
            subject: f.subject,
            object: String(f.object),
          })),
        );
        expect(decided).toHaveLength(expected.length === 0 ? 0 : 1);
        if (expected.length === 0) return;
        const { triples, by } = decided[0]!.data;
        expect(by).toBe('rule');
        expect(triples.map((t) => ({ source: t.sourceEventIds?.[0], subject: t.subject, object: t.object }))).toEqual(expected);
        expect(new Set(triples.map((t) => t.relationId)).size).toBe(triples.length);
      }),
      options,
    );
  });
});

describe('merge and review (property)', () => {
  it('proposes each near-duplicate pair once, never one considered before', () => {
    const entity = fc.record({
      entity: fc.constantFrom('e1', 'e2', 'e3', 'e4'),
      name: fc.constantFrom('Alice Chen', 'alice  chen', 'Alice', 'Bob'),
    });
    fc.assert(
      fc.property(
        fc.array(entity, { maxLength: 6 }),
        fc.array(fc.constantFrom('e1|e2', 'e1|e3', 'e2|e3'), { maxLength: 3 }),
        atArb,
        (entities, considered, at) => {
          const seen = new Set<string>(considered);
          const decided = decideMergeProposals(entities, seen, at);
          appendable(decided);
          const all = proposeMerges(entities.map((e) => ({ id: e.entity, name: e.name })));
          expect(decided.map((d) => d.data)).toEqual(all.filter((p) => !seen.has(`${p.a}|${p.b}`)).map((p) => ({ ...p, at })));
        },
      ),
      options,
    );
  });

  it('applies a merge verdict as one merge of b into a, and a keep as nothing', () => {
    fc.assert(
      fc.property(mergeVerdictArb, (verdict) => {
        const decided = mergeVerdictFacts(verdict);
        appendable(decided);
        expect(decided).toEqual(
          verdict.decision === 'merge'
            ? [{ type: 'EntitiesMerged', data: { into: verdict.a, from: verdict.b, by: 'llm', at: verdict.at } }]
            : [],
        );
      }),
      options,
    );
  });

  it('raises a kept relation to full confidence and purges a dropped one, nothing else', () => {
    fc.assert(
      fc.property(reviewVerdictArb, (verdict) => {
        const decided = reviewVerdictFacts(verdict);
        appendable(decided);
        expect(decided).toEqual(
          verdict.verdict === 'drop'
            ? [{ type: 'MemoryPurged', data: { relationIds: [verdict.relationId], at: verdict.at } }]
            : [{ type: 'RelationEdited', data: { relationId: verdict.relationId, confidence: 1, at: verdict.at } }],
        );
      }),
      options,
    );
  });

  it('asks about the first unread relations below full confidence that came with a sentence, at most limit', () => {
    fc.assert(
      fc.property(relationsArb, fc.subarray(['r0', 'r1', 'r2', 'r3']), fc.integer({ min: 0, max: 12 }), (relations, read, limit) => {
        const reviewed = new Set(read);
        const asked = reviewCandidates(relations, reviewed, limit);
        const eligible = relations.filter((r) => r.confidence < 1 && !!r.sentence && r.predicate !== 'said' && !reviewed.has(r.relationId));
        expect(asked).toEqual(eligible.slice(0, limit));
      }),
      options,
    );
  });
});

describe('decideRestore (property)', () => {
  it("brings a doc's events back in order first, then removes the doc as recalled", () => {
    fc.assert(
      fc.property(
        archivableDocsArb.filter((docs) => docs.length > 0),
        atArb,
        ([doc], at) => {
          const decided = decideRestore(doc!, at);
          appendable(decided);
          expect(decided).toEqual([
            { type: 'ContextEventsRestored', data: { scope: doc!.scope, docId: doc!.docId, events: doc!.events, at } },
            { type: 'ColdDocRemoved', data: { docId: doc!.docId, reason: 'recalled', at } },
          ]);
        },
      ),
      options,
    );
  });
});
