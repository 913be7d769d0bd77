/**
 * Model-based test of the memory tiers (fc.commands): random inputs (some holding media
 * blocks), cold peeks, restores and archive runs, against a model of what was said. After
 * every command: each event is in exactly one of L1 or L2, or distilled into L3 with a
 * sentence reference; each block has exactly one holder, in the tier its event is in; a peek
 * changes nothing in L2 but access counts. FC_RUNS sets the number of runs.
 */
import { join } from 'node:path';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { SqliteEventStore } from '../../adapters/sqlite/sqliteEventStore.ts';
import { createDefaultCatalog, SequentialIds, VirtualClock } from '../../events/index.ts';
import { openMemory, type OpenMemory } from '../../actors/memory/openMemory.ts';
import { SqliteReadModelTx } from '../../actors/projections/sqliteReadModelTx.ts';
import type { ReadModelTx } from '../../projections/index.ts';

const RUNS = Number(process.env.FC_RUNS ?? 60);
const SCOPE = 'chat:prop';
const WORDS = ['bicycle', 'chess', 'london', 'soup', 'novel', 'piano', 'garden', 'tea'];

type Model = { said: { eventId: string; blockId: string | null }[] };
type Real = { memory: OpenMemory; tx: ReadModelTx; clock: VirtualClock };

const tiersOf = (tx: ReadModelTx) => {
  const context = new Set(tx.all<{ event_id: string }>('SELECT event_id FROM memory_context_events').map((r) => r.event_id));
  const cold = new Map<string, string>();
  for (const doc of tx.all<{ doc_id: string; events: string }>('SELECT doc_id, events FROM memory_cold_docs')) {
    for (const e of JSON.parse(doc.events) as { eventId: string }[]) cold.set(e.eventId, doc.doc_id);
  }
  const graph = new Map<string, string>();
  for (const rel of tx.all<{ relation_id: string; source_events: string; sentence: string | null }>(
    'SELECT relation_id, source_events, sentence FROM memory_graph_relations',
  )) {
    if (rel.sentence) for (const id of JSON.parse(rel.source_events) as string[]) if (!graph.has(id)) graph.set(id, rel.relation_id);
  }
  return { context, cold, graph };
};

const checkInvariants = (model: Model, real: Real) => {
  const { context, cold, graph } = tiersOf(real.tx);
  const holders = real.tx.all<{ block_id: string; tier: string; holder: string }>(
    'SELECT block_id, tier, holder FROM memory_blocks_holders',
  );
  expect(new Set(holders.map((h) => h.block_id)).size).toBe(holders.length);
  const holderOf = new Map(holders.map((h) => [h.block_id, h]));
  for (const { eventId, blockId } of model.said) {
    const places = [context.has(eventId), cold.has(eventId), graph.has(eventId) && !context.has(eventId) && !cold.has(eventId)].filter(
      Boolean,
    );
    expect(places, `event ${eventId} must be in exactly one tier`).toHaveLength(1);
    if (context.has(eventId) && cold.has(eventId)) throw new Error(`event ${eventId} is in L1 and L2 at once`);
    if (!blockId) continue;
    const holder = holderOf.get(blockId);
    expect(holder, `block ${blockId} of ${eventId} has a holder`).toBeDefined();
    if (context.has(eventId)) expect(holder).toMatchObject({ tier: 'context', holder: eventId });
    else if (cold.has(eventId)) expect(holder).toMatchObject({ tier: 'cold', holder: cold.get(eventId) });
    else expect(holder!.tier).toBe('graph');
  }
};

class Say implements fc.AsyncCommand<Model, Real> {
  constructor(
    readonly words: number[],
    readonly withBlock: boolean,
  ) {}
  check = () => true;
  async run(model: Model, real: Real) {
    real.clock.set(real.clock.now() + 60_000);
    const n = model.said.length;
    const blockId = this.withBlock ? `blk_media_${n}` : null;
    const { eventId } = await real.memory.observe(SCOPE, {
      role: 'user',
      speaker: 'Ada',
      text: this.words.map((w) => WORDS[w]).join(' '),
      at: real.clock.now(),
      cites: [`D1:${n + 1}`],
      ...(blockId ? { blocks: [{ blockId, kind: 'media' as const, mime: 'image/png' }] } : {}),
    });
    model.said.push({ eventId, blockId });
    checkInvariants(model, real);
  }
  toString = () => `say(${this.words.map((w) => WORDS[w]).join(' ')}${this.withBlock ? ', +block' : ''})`;
}

class Peek implements fc.AsyncCommand<Model, Real> {
  constructor(readonly word: number) {}
  check = () => true;
  async run(model: Model, real: Real) {
    const strip = () =>
      real.tx.all<Record<string, unknown>>('SELECT doc_id, scope, text, cites, events, created_at FROM memory_cold_docs ORDER BY doc_id');
    const before = strip();
    await real.memory.peekCold(WORDS[this.word]!, 3, real.clock.now());
    expect(strip()).toEqual(before);
    checkInvariants(model, real);
  }
  toString = () => `peek(${WORDS[this.word]})`;
}

class Restore implements fc.AsyncCommand<Model, Real> {
  constructor(readonly pick: number) {}
  check = () => true;
  async run(model: Model, real: Real) {
    const docs = real.tx.all<{ doc_id: string }>('SELECT doc_id FROM memory_cold_docs ORDER BY doc_id');
    if (docs.length === 0) return;
    real.clock.set(real.clock.now() + 1_000);
    await real.memory.restoreCold(docs[this.pick % docs.length]!.doc_id, real.clock.now());
    checkInvariants(model, real);
  }
  toString = () => `restore(#${this.pick})`;
}

class Idle implements fc.AsyncCommand<Model, Real> {
  constructor(readonly hours: number) {}
  check = () => true;
  async run(model: Model, real: Real) {
    real.clock.set(real.clock.now() + this.hours * 3_600_000);
    await real.memory.tick(real.clock.now());
    checkInvariants(model, real);
  }
  toString = () => `idle(${this.hours} h)`;
}

const say = fc
  .tuple(fc.array(fc.integer({ min: 0, max: WORDS.length - 1 }), { minLength: 1, maxLength: 3 }), fc.boolean())
  .map(([w, b]) => new Say(w, b));
const commands = [
  say,
  say,
  fc
    .tuple(fc.array(fc.integer({ min: 0, max: WORDS.length - 1 }), { minLength: 1, maxLength: 3 }), fc.boolean())
    .map(([w, b]) => new Say(w, b)),
  fc.integer({ min: 0, max: WORDS.length - 1 }).map((w) => new Peek(w)),
  fc.nat(20).map((p) => new Restore(p)),
  fc.constantFrom(1, 30, 80).map((h) => new Idle(h)),
];

describe('memory tiers (model-based)', () => {
  it('keeps every event in exactly one tier and every block with exactly one holder; peeks change nothing', async () => {
    await fc.assert(
      fc.asyncProperty(fc.commands(commands, { maxCommands: 40, size: 'max' }), async (cmds) => {
        const dir = mkdtempSync(join(tmpdir(), 'hologram-memprop-'));
        const clock = new VirtualClock(1_700_000_000_000);
        const store = SqliteEventStore.open(join(dir, 'events.db'), {
          catalog: createDefaultCatalog(),
          clock,
          ids: new SequentialIds('e'),
        });
        try {
          const memory = await openMemory(store, {
            ids: new SequentialIds('m'),
            clock,
            startAt: clock.now(),
            config: { prune: { protectRecent: 2, keepTopK: 1, budgetTokens: 10_000 } },
          });
          await fc.asyncModelRun(() => ({ model: { said: [] }, real: { memory, tx: new SqliteReadModelTx(store.db), clock } }), cmds);
          await memory.settled();
        } finally {
          await store.close();
          rmSync(dir, { recursive: true, force: true });
        }
      }),
      { numRuns: RUNS },
    );
  }, 120_000);
});
