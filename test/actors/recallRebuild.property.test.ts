/**
 * Model-based (fc.commands): whatever a memory went through (two people talking, context
 * sinking, cold recalls restored, idle docs archived into the graph, facts committed by a
 * tool, cold docs committed, entities merged and renamed, recalls in between), a memory opened afresh on the same log recalls exactly what the live one recalls: the
 * same items in the same order with the same scores, and its index, kept in step event by event,
 * ranks every query exactly as the index rebuilt from the read models does (over all items, and
 * over the conversation's context as the prune searches it). A memory started from the index
 * snapshot the live one left at its stop ranks and recalls the same too, and goes on the same
 * after one more line (neighbours and pauses included), and so does one rebuilt at start (the
 * next line's neighbours found in whatever tier they sank to). A memory started after a crash
 * from a snapshot written in the middle of it all catches it up with what came after, and ranks
 * and recalls as the live one did. The recall index is a cache; this is what makes it one.
 * FC_RUNS sets the number of runs.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { SqliteEventStore } from '../../adapters/sqlite/sqliteEventStore.ts';
import { createDefaultCatalog, SequentialIds, VirtualClock } from '../../events/index.ts';
import { openMemory, type OpenMemory } from '../../actors/memory/openMemory.ts';

const RUNS = Number(process.env.FC_RUNS ?? 25);
const SCOPE = 'chat:prop';
const WORDS = ['bicycle', 'chess', 'london', 'soup', 'novel', 'piano', 'taekwondo', 'daughter'];
const PEOPLE = ['Ada', 'Bo'];
const START = Date.UTC(2024, 0, 1, 9);
/**
 * How many recent utterances the prune protects: with fewer than the two "after" neighbours, an
 * utterance sinks before its last ones come. Neighbours end at a pause of an hour, so what is
 * said after an idle spell starts a new stretch of talk.
 */
const configOf = (protectRecent: number) => ({
  prune: { protectRecent, keepTopK: 1, budgetTokens: 10_000 },
  neighbourPauseMs: 3_600_000,
});

/** What was said so far, and how many notes were committed (doc ids are unique, as the tool's are). */
type Model = { said: number; notes: number };
type Real = { memory: OpenMemory; clock: VirtualClock };

class Say implements fc.AsyncCommand<Model, Real> {
  constructor(
    readonly person: number,
    readonly words: number[],
    readonly when: boolean,
  ) {}
  check = () => true;
  async run(model: Model, real: Real) {
    real.clock.set(real.clock.now() + 60_000);
    model.said++;
    const text = `${this.words.map((w) => WORDS[w]).join(' ')}${this.when ? ' yesterday' : ''}${this.words.length > 2 ? '?' : '.'}`;
    await real.memory.observe(SCOPE, {
      role: 'user',
      speaker: PEOPLE[this.person]!,
      text,
      at: real.clock.now(),
      cites: [`D1:${model.said}`],
    });
  }
  toString = () => `${PEOPLE[this.person]}: ${this.words.map((w) => WORDS[w]).join(' ')}${this.when ? ' yesterday' : ''}`;
}

class Restore implements fc.AsyncCommand<Model, Real> {
  constructor(readonly word: number) {}
  check = () => true;
  async run(_: Model, real: Real) {
    const [hit] = await real.memory.peekCold(WORDS[this.word]!, 1, real.clock.now());
    if (hit) await real.memory.restoreCold(hit.id.slice('doc:'.length), real.clock.now());
  }
  toString = () => `restore(${WORDS[this.word]})`;
}

class Idle implements fc.AsyncCommand<Model, Real> {
  constructor(readonly hours: number) {}
  check = () => true;
  async run(_: Model, real: Real) {
    real.clock.set(real.clock.now() + this.hours * 3_600_000);
    await real.memory.tick(real.clock.now());
  }
  toString = () => `idle(${this.hours} h)`;
}

class Commit implements fc.AsyncCommand<Model, Real> {
  constructor(
    readonly person: number,
    readonly word: number,
  ) {}
  check = () => true;
  async run(model: Model, real: Real) {
    const subject = PEOPLE[this.person]!;
    const relationId = `t${model.said}-${this.word}`;
    const triple = {
      relationId,
      subject,
      predicate: 'likes',
      object: WORDS[this.word]!,
      confidence: 1,
      sentence: `${subject} likes ${WORDS[this.word]}`,
    };
    await real.memory.record(
      [{ type: 'MemoryCommitted', data: { triples: [triple], by: 'tool', at: real.clock.now() } }],
      real.clock.now(),
    );
  }
  toString = () => `commit(${PEOPLE[this.person]} likes ${WORDS[this.word]})`;
}

class ColdCommit implements fc.AsyncCommand<Model, Real> {
  constructor(readonly words: number[]) {}
  check = () => true;
  async run(model: Model, real: Real) {
    const docId = `note-${++model.notes}`;
    const text = this.words.map((w) => WORDS[w]).join(' ');
    await real.memory.record(
      [{ type: 'ColdDocCommitted', data: { scope: SCOPE, docId, text, cites: [`N${model.said}`], at: real.clock.now() } }],
      real.clock.now(),
    );
  }
  toString = () => `coldcontext_commit(${this.words.map((w) => WORDS[w]).join(' ')})`;
}

class Merge implements fc.AsyncCommand<Model, Real> {
  constructor(
    readonly from: number,
    readonly into: number,
  ) {}
  check = () => this.from !== this.into;
  async run(_: Model, real: Real) {
    await real.memory.record(
      [{ type: 'EntitiesMerged', data: { from: WORDS[this.from]!, into: WORDS[this.into]!, by: 'tool', at: real.clock.now() } }],
      real.clock.now(),
    );
  }
  toString = () => `merge(${WORDS[this.from]} into ${WORDS[this.into]})`;
}

class Rename implements fc.AsyncCommand<Model, Real> {
  constructor(readonly person: number) {}
  check = () => true;
  async run(_: Model, real: Real) {
    const entity = PEOPLE[this.person]!;
    await real.memory.record(
      [{ type: 'EntityEdited', data: { entity, renameTo: `${entity} Smith`, at: real.clock.now() } }],
      real.clock.now(),
    );
  }
  toString = () => `rename(${PEOPLE[this.person]})`;
}

const QUERIES = [
  ...WORDS,
  ...WORDS.map((w) => `What did Bo say about ${w}?`),
  'When did Ada talk about chess?',
  'martial arts',
  'children',
  'What did Ada say on 1 January, 2024?',
  'What does Ada Smith like?',
];

/** A recall in the middle of it all: what the live memory caches for a recall must not outlive what changes it. */
class Recall implements fc.AsyncCommand<Model, Real> {
  constructor(readonly query: number) {}
  check = () => true;
  async run(_: Model, real: Real) {
    await real.memory.recall(QUERIES[this.query]!, 5, SCOPE);
  }
  toString = () => `recall(${QUERIES[this.query]})`;
}

const word = fc.integer({ min: 0, max: WORDS.length - 1 });
const person = fc.integer({ min: 0, max: PEOPLE.length - 1 });
const commands = [
  fc.tuple(person, fc.array(word, { minLength: 1, maxLength: 3 }), fc.boolean()).map(([p, w, y]) => new Say(p, w, y)),
  fc.tuple(person, fc.array(word, { minLength: 1, maxLength: 3 }), fc.boolean()).map(([p, w, y]) => new Say(p, w, y)),
  word.map((w) => new Restore(w)),
  fc.constantFrom(1, 30, 80).map((h) => new Idle(h)),
  fc.tuple(person, word).map(([p, w]) => new Commit(p, w)),
  fc.tuple(word, word).map(([a, b]) => new Merge(a, b)),
  person.map((p) => new Rename(p)),
  fc.array(word, { minLength: 1, maxLength: 3 }).map((w) => new ColdCommit(w)),
  fc.integer({ min: 0, max: QUERIES.length - 1 }).map((q) => new Recall(q)),
];

/** What the index itself ranks for every query, before recall combines tiers: all items, and the scope's context. */
const rankAll = (memory: OpenMemory) =>
  QUERIES.map((q) => {
    const ranked = (hits: readonly { id: string; score: number }[]) => hits.map((h) => [h.id, Number(h.score.toFixed(9))]);
    return { all: ranked(memory.index.items.search(q, 1_000)), context: ranked(memory.index.items.searchContext(q, SCOPE, 1_000)) };
  });

const recallAll = (memory: OpenMemory) =>
  Promise.all(
    QUERIES.map(async (q) =>
      (await memory.recall(q, 5, SCOPE)).map((h) => ({
        tier: h.tier,
        cites: h.cites,
        text: h.text,
        score: Number(h.score.toFixed(9)),
      })),
    ),
  );

/**
 * A memory over the log in `dir`, its ids named apart by `run` (as a daemon's random ids are);
 * `withSnapshot`: started from (and saying into `logged` what it did with) `dir/index.snapshot`.
 */
const openIn = async (dir: string, protectRecent: number, run: string, withSnapshot: boolean, logged: string[]) => {
  const clock = new VirtualClock(START);
  const store = SqliteEventStore.open(join(dir, 'events.db'), {
    catalog: createDefaultCatalog(),
    clock,
    ids: new SequentialIds(`e${run}`),
  });
  const memory = await openMemory(store, {
    ids: new SequentialIds(`m${run}`),
    clock,
    startAt: START,
    config: configOf(protectRecent),
    ...(withSnapshot ? { indexSnapshot: { path: join(dir, 'index.snapshot'), log: (line: string) => logged.push(line) } } : {}),
  });
  return { store, memory, clock };
};

type Opened = Awaited<ReturnType<typeof openIn>>;

/** `opened` hears one more line a minute after `after` and stops; the memory `reopen` rebuilds ranks and recalls as it did. */
const goesOnAsRebuilt = async (opened: Opened, after: number, reopen: () => Promise<Opened>) => {
  const next = after + 60_000;
  opened.clock.set(next);
  await opened.memory.observe(SCOPE, { role: 'user', speaker: 'Ada', text: 'novel london.', at: next, cites: ['D2:2'] });
  await opened.memory.settled();
  const ranked = rankAll(opened.memory);
  const recalled = await recallAll(opened.memory);
  await opened.store.close();
  const rebuilt = await reopen();
  expect(rankAll(rebuilt.memory)).toEqual(ranked);
  expect(await recallAll(rebuilt.memory)).toEqual(recalled);
  await rebuilt.memory.settled();
  await rebuilt.store.close();
};

describe('recall index rebuilt at start (model-based)', () => {
  it('recalls after a restart exactly what it recalled before', async () => {
    await fc.assert(
      fc.asyncProperty(fc.commands(commands, { maxCommands: 30, size: 'max' }), fc.constantFrom(0, 1, 2), async (cmds, protectRecent) => {
        const dir = mkdtempSync(join(tmpdir(), 'hologram-rebuild-'));
        const snapshotPath = join(dir, 'index.snapshot');
        const unused: string[] = [];
        const open = (withSnapshot = false, run = '') => openIn(dir, protectRecent, run, withSnapshot, unused);
        try {
          const live = await open();
          await fc.asyncModelRun(() => ({ model: { said: 0, notes: 0 }, real: { memory: live.memory, clock: live.clock } }), cmds);
          await live.memory.settled();
          // Where items moved is kept only for the last utterances, which may still get neighbours.
          expect(live.memory.index.toState().items.movedTo.length).toBeLessThanOrEqual(2);
          const before = await recallAll(live.memory);
          const rankedBefore = rankAll(live.memory);
          await live.memory.saveIndexSnapshot(snapshotPath);
          await live.store.close();
          // Started from the snapshot the stop left: the index read back ranks and recalls as the live one did.
          const fromSnapshot = await open(true, 's');
          expect(unused).toEqual([]);
          expect(rankAll(fromSnapshot.memory)).toEqual(rankedBefore);
          expect(await recallAll(fromSnapshot.memory)).toEqual(before);
          // ...and goes on as the live one would: a line said a minute after the last has it as its neighbour.
          const last = live.clock.now() + 60_000;
          fromSnapshot.clock.set(last);
          await fromSnapshot.memory.observe(SCOPE, { role: 'user', speaker: 'Bo', text: 'chess soup piano?', at: last, cites: ['D2:1'] });
          await fromSnapshot.memory.settled();
          const rankedGoingOn = rankAll(fromSnapshot.memory);
          const goingOn = await recallAll(fromSnapshot.memory);
          await fromSnapshot.store.close();
          // Rebuilt from the log and read models: the same ranking and recall as the index kept in step (and read back).
          const restarted = await open(false, 'r');
          expect(rankAll(restarted.memory)).toEqual(rankedGoingOn);
          expect(await recallAll(restarted.memory)).toEqual(goingOn);
          // ...and, rebuilt, goes on as the live one would too: the next line reaches its neighbours in whatever tier they sank to.
          await goesOnAsRebuilt(restarted, last, () => open(false, 'g'));
        } finally {
          rmSync(dir, { recursive: true, force: true });
        }
      }),
      { numRuns: RUNS },
    );
  }, 180_000);
});

describe('recall index caught up from an earlier snapshot (model-based)', () => {
  it('after a crash, a snapshot written mid-way and caught up ranks and recalls as the live memory did', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.commands(commands, { maxCommands: 20, size: 'max' }),
        fc.commands(commands, { maxCommands: 20, size: 'max' }),
        fc.constantFrom(0, 1, 2),
        async (before, after, protectRecent) => {
          const dir = mkdtempSync(join(tmpdir(), 'hologram-catchup-'));
          const snapshotPath = join(dir, 'index.snapshot');
          const logged: string[] = [];
          const open = (run: string, withSnapshot: boolean) => openIn(dir, protectRecent, run, withSnapshot, logged);
          try {
            const live = await open('', false);
            const model = { said: 0, notes: 0 };
            await fc.asyncModelRun(() => ({ model, real: { memory: live.memory, clock: live.clock } }), before);
            await live.memory.saveIndexSnapshot(snapshotPath);
            await fc.asyncModelRun(() => ({ model, real: { memory: live.memory, clock: live.clock } }), after);
            await live.memory.settled();
            const ranked = rankAll(live.memory);
            const recalled = await recallAll(live.memory);
            // The run ends without writing a snapshot, as a crash does.
            await live.store.close();
            const caughtUp = await open('c', true);
            expect(logged.filter((line) => line.includes('rebuilding'))).toEqual([]);
            expect(rankAll(caughtUp.memory)).toEqual(ranked);
            expect(await recallAll(caughtUp.memory)).toEqual(recalled);
            expect(caughtUp.memory.index.toState().items.movedTo.length).toBeLessThanOrEqual(2);
            // ...and goes on as a rebuilt one would: the next line reaches its neighbours wherever they are.
            await goesOnAsRebuilt(caughtUp, live.clock.now(), () => open('r', false));
          } finally {
            rmSync(dir, { recursive: true, force: true });
          }
        },
      ),
      { numRuns: RUNS },
    );
  }, 180_000);
});
