/**
 * The recall path over a real log: what a question is about beyond its words (the person it
 * names, the day it names, that it asks when), the utterance before a reply, related words from
 * the bundled WordNet, one hit per utterance, and the same answers after a restart.
 */
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { SqliteEventStore } from '../../adapters/sqlite/sqliteEventStore.ts';
import { createDefaultCatalog, SequentialIds, VirtualClock } from '../../events/index.ts';
import { openMemory, type OpenMemory } from '../../actors/memory/openMemory.ts';
import type { MemoryConfig } from '../../actors/memory/openMemory.ts';
import { useOpenStores, useTempDir } from '../support/tempDir.ts';

const tempDir = useTempDir();
const stores = useOpenStores();

const SCOPE = 'chat:friends';
const DAY = 86_400_000;
const START = Date.UTC(2023, 4, 1, 12);

type Line = readonly [speaker: string, text: string];

const open = async (path: string, config: Partial<MemoryConfig> = {}, startAt = START - 1): Promise<OpenMemory> => {
  const clock = new VirtualClock(Math.max(START, startAt));
  const store = SqliteEventStore.open(path, { catalog: createDefaultCatalog(), clock, ids: new SequentialIds(`e${startAt}`) });
  stores.push(store);
  // Nothing sinks or distils unless a test asks: recall must find items in any tier alike.
  return openMemory(store, {
    ids: new SequentialIds('m'),
    clock,
    // By default just before the first utterance: a loop's first firing reads what was said after the start.
    startAt,
    config: { prune: { protectRecent: 1000, keepTopK: 1000, budgetTokens: 1_000_000 }, ...config },
  });
};

/** Each line is said at `at` + its index in seconds and cites `D<day>:<n>`. */
const converse = async (memory: OpenMemory, lines: readonly Line[], at = START, day = 1) => {
  for (const [i, [speaker, text]] of lines.entries()) {
    await memory.observe(SCOPE, { role: 'user', speaker, text, at: at + i * 1000, cites: [`D${day}:${i + 1}`] });
  }
};

const citesOf = async (memory: OpenMemory, query: string, k = 3) => (await memory.recall(query, k, SCOPE)).flatMap((h) => h.cites);

describe('recall', () => {
  it('prefers what the person a question names said, over more matching words said by another', async () => {
    const memory = await open(join(tempDir(), 'events.db'));
    await converse(memory, [
      ['Caroline', 'Melanie and I both love hiking, we love it.'],
      ['Caroline', 'The weather was grey.'],
      ['Caroline', 'Work was busy.'],
      ['Melanie', 'I love hiking in the mountains.'],
    ]);
    expect((await citesOf(memory, 'What does Melanie love?', 1))[0]).toBe('D1:4');
  });

  it('finds a reply by the words of the question just before it, ahead of what came before the question', async () => {
    const memory = await open(join(tempDir(), 'events.db'));
    await converse(memory, [
      ['Jon', 'Good morning.'],
      ['Gina', 'What inspired your dance routine?'],
      ['Jon', 'Street performers downtown.'],
    ]);
    expect(await citesOf(memory, 'inspired dance routine', 3)).toEqual(['D1:2', 'D1:3', 'D1:1']);
  });

  it('prefers what was said on the day a question names', async () => {
    const memory = await open(join(tempDir(), 'events.db'));
    await converse(memory, [['Nate', 'I made coconut ice cream today.']], START, 1);
    await converse(memory, [['Nate', 'I made coconut ice cream again today.']], START + 10 * DAY, 2);
    expect((await citesOf(memory, 'What did Nate make on 11 May, 2023?', 1))[0]).toBe('D2:1');
    expect((await citesOf(memory, 'What did Nate make on May 1, 2023?', 1))[0]).toBe('D1:1');
  });

  it('reads "yesterday" in a question as the day before the input that asks', async () => {
    const memory = await open(join(tempDir(), 'events.db'));
    await converse(memory, [['Ada', 'I baked bread.']], START, 1);
    await converse(memory, [['Ada', 'I baked bread again.']], START + 3 * DAY, 2);
    const asked = (at: number) => memory.recall('What did Ada bake yesterday?', 1, SCOPE, { text: 'What did Ada bake yesterday?', at });
    expect((await asked(START + DAY))[0]!.cites).toEqual(['D1:1']);
    expect((await asked(START + 4 * DAY))[0]!.cites).toEqual(['D2:1']);
  });

  it('answers a when-question with the utterance that says when', async () => {
    const memory = await open(join(tempDir(), 'events.db'));
    await converse(memory, [
      ['Maria', 'My pottery class, I love my pottery class.'],
      ['Maria', 'The weather was grey.'],
      ['Maria', 'Work was busy.'],
      ['Maria', 'I joined a pottery class yesterday.'],
    ]);
    expect((await citesOf(memory, 'When did Maria start her pottery class?', 1))[0]).toBe('D1:4');
    expect((await citesOf(memory, 'What does Maria love about her pottery class?', 1))[0]).toBe('D1:1');
  });

  it('finds an utterance by a broader term WordNet knows, and not without the lexicon', async () => {
    const lines: Line[] = [
      ['John', 'I am off to do some taekwondo tonight.'],
      ['John', 'Work was busy today.'],
    ];
    const withWordNet = await open(join(tempDir(), 'a.db'));
    await converse(withWordNet, lines);
    // Only the lexicon links the two: neither line nor its neighbour says "martial" or "art".
    expect(await citesOf(withWordNet, 'martial arts', 3)).toEqual(['D1:1']);
    const without = await open(join(tempDir(), 'b.db'), { lexicon: 'none' });
    await converse(without, lines);
    expect(await citesOf(without, 'martial arts', 3)).toEqual([]);
  });

  it('walks the graph two hops from the entities the query names and the facts its words found, no further', async () => {
    const memory = await open(join(tempDir(), 'events.db'));
    const fact = (relationId: string, subject: string, predicate: string, object: string, sentence: string) => ({
      relationId,
      subject,
      predicate,
      object,
      confidence: 1,
      sentence,
    });
    await memory.record(
      [
        {
          type: 'MemoryCommitted',
          data: {
            triples: [
              fact('r1', 'Ada', 'lives_in', 'London', 'Ada lives in London'),
              fact('r2', 'London', 'capital_of', 'England', 'London is the capital of England'),
              fact('r3', 'England', 'part_of', 'Europe', 'England is part of Europe'),
              fact('r4', 'Europe', 'on', 'Earth', 'Europe is on Earth'),
              fact('r5', 'Art', 'is', 'long', 'Art is long'),
            ],
            by: 'tool',
            at: START,
          },
        },
      ],
      START,
    );
    const texts = (await memory.recall('Where does Ada live?', 10, SCOPE)).map((h) => h.text);
    expect(texts[0]).toBe('Ada lives in London');
    expect(texts).toEqual(expect.arrayContaining(['London is the capital of England', 'England is part of Europe']));
    expect(texts).not.toContain('Europe is on Earth');
    // An entity is named only by all of its words, not by letters inside another word.
    expect((await memory.recall('When did the start happen?', 10, SCOPE)).map((h) => h.text)).not.toContain('Art is long');
  });

  it('gives one hit per utterance: a fact distilled from it does not take a second place', async () => {
    const memory = await open(join(tempDir(), 'events.db'));
    await converse(memory, [
      ['Ada', 'I live in Lisbon and I love the sea.'],
      ['Ada', 'Lisbon has the best pastries.'],
    ]);
    expect(await memory.tick(START + 10 * 60_000)).toEqual(['rules']);
    const hits = await memory.recall('Lisbon', 5, SCOPE);
    const sources = hits.flatMap((h) => h.sources ?? []);
    expect(new Set(sources).size).toBe(sources.length);
    expect(hits.flatMap((h) => h.cites).sort()).toEqual(['D1:1', 'D1:2']);
  });

  it('recalls the same after a restart, when the utterances were distilled into the graph', async () => {
    const path = join(tempDir(), 'events.db');
    const first = await open(path, { prune: { protectRecent: 0, keepTopK: 0, budgetTokens: 1_000_000 } });
    await converse(first, [
      ['Caroline', 'I went to a support group yesterday.'],
      ['Melanie', 'I went to the museum with my kids.'],
      ['Caroline', 'The support group was inspiring.'],
    ]);
    // Everything sinks (nothing protected); months later the idle docs are distilled into graph sentences.
    expect(await first.tick(START + 90 * DAY)).toContain('archive');
    const questions = ['When did Caroline go to the support group?', 'What did Melanie do on 1 May, 2023?'];
    const before = await Promise.all(questions.map((q) => first.recall(q, 3, SCOPE)));
    expect(before.flat().every((h) => h.tier === 'graph')).toBe(true);
    await stores.pop()!.close();
    const second = await open(path, { prune: { protectRecent: 0, keepTopK: 0, budgetTokens: 1_000_000 } }, START + 91 * DAY);
    const after = await Promise.all(questions.map((q) => second.recall(q, 3, SCOPE)));
    expect(after.map((hits) => hits.map((h) => [h.cites, h.score]))).toEqual(before.map((hits) => hits.map((h) => [h.cites, h.score])));
    // Distilled sentences keep who said them and when, so the person and the day still count.
    expect(after[1]![0]!.cites).toEqual(['D1:2']);
  });
});
