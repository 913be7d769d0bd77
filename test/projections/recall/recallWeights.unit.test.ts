/** How much an item counts in a recall beyond its words: scope, the person asked about, named days, when-questions, scenes. */
import { describe, expect, it } from 'vitest';
import type { RecallItem } from '../../../projections/memory/recall/recallIndex.ts';
import { focusOf, PERSON_BOOST, SCENE_BOOST, TIME_BOOST, weighFor, WHEN_BOOST } from '../../../projections/memory/recall/recallWeights.ts';

const AT = Date.UTC(2023, 4, 8, 13);
const item = (over: Partial<RecallItem> = {}): RecallItem => ({
  id: 'ctx:1',
  tier: 'context',
  scope: 's',
  text: 'Ada: hello',
  cites: [],
  at: AT,
  ...over,
});
const PEOPLE = ['Ada', 'Bo'];

describe('recall weights', () => {
  it('leaves out items of another scope, but not graph items', () => {
    const weigh = weighFor(focusOf('hello', PEOPLE, 's'));
    expect(weigh(item({ scope: 'other' }))).toBe(0);
    expect(weigh(item({ tier: 'graph', scope: '' }))).toBe(1);
    expect(weigh(item())).toBe(1);
  });

  it('weighs what the first person named said (any case), not what others said', () => {
    const weigh = weighFor(focusOf('What did Bo tell Ada?', PEOPLE));
    expect(weigh(item({ person: 'bo' }))).toBe(1 + PERSON_BOOST);
    expect(weigh(item({ person: 'Ada' }))).toBe(1);
    expect(weighFor(focusOf('What did they say?', PEOPLE))(item({ person: 'Bo' }))).toBe(1);
  });

  it('weighs what was said within a named day or month', () => {
    const onTheDay = weighFor(focusOf('What happened on 8 May, 2023?', PEOPLE));
    expect(onTheDay(item())).toBe(1 + TIME_BOOST);
    expect(onTheDay(item({ at: AT + 86_400_000 }))).toBe(1);
    expect(weighFor(focusOf('in May 2023', PEOPLE))(item({ at: Date.UTC(2023, 4, 31, 23) }))).toBe(1 + TIME_BOOST);
  });

  it('weighs what speaks of a named day, read against when it was said, as what was said on it', () => {
    const onTheDay = weighFor(focusOf('What did Ada watch on 7 May, 2023?', PEOPLE));
    expect(onTheDay(item({ text: 'Ada: I watched a film last night' }))).toBe(1 + TIME_BOOST);
    expect(onTheDay(item({ text: 'Ada: I watched a film tonight' }))).toBe(1);
  });

  it('weighs an utterance that says when, for a when-question only', () => {
    const when = weighFor(focusOf('When did Ada move?', PEOPLE));
    expect(when(item({ text: 'Ada: I moved last week.' }))).toBe(1 + WHEN_BOOST);
    expect(when(item({ text: 'Ada: 我上周搬家了' }))).toBe(1 + WHEN_BOOST);
    expect(when(item({ text: 'Ada: I moved.' }))).toBe(1);
    expect(weighFor(focusOf('Where did Ada move?', PEOPLE))(item({ text: 'Ada: I moved last week.' }))).toBe(1);
  });

  it("weighs members of recalled scenes by their scene's relative score", () => {
    const weigh = weighFor(focusOf('hello', PEOPLE, undefined, new Map([['e1', 0.5]])));
    expect(weigh(item({ sources: ['e1'] }))).toBe(1 + SCENE_BOOST * 0.5);
    expect(weigh(item({ sources: ['e2'] }))).toBe(1);
  });

  it('no item weighs more than the weight says is its most', () => {
    const scenes = new Map([
      ['e1', 1],
      ['e2', 0.4],
    ]);
    const queries = ['hello', 'When did Ada go to the park on 8 May 2023?', 'what did Bo say yesterday', 'When?'];
    for (const query of queries) {
      for (const sceneWeights of [undefined, scenes]) {
        const weigh = weighFor(focusOf(query, PEOPLE, 's', sceneWeights, AT + 86_400_000));
        const items = [
          item(),
          item({ person: 'Ada', text: 'Ada: yesterday at the park', sources: ['e1', 'e2'] }),
          item({ person: 'Bo', text: 'Bo: last week', at: AT - 86_400_000, sources: ['e2'] }),
          item({ tier: 'graph', scope: '', person: 'Ada', text: 'Ada went on 8 May 2023', sources: ['e1'] }),
        ];
        for (const it of items) expect(weigh(it)).toBeLessThanOrEqual(weigh.max!);
        expect(Math.max(...items.map(weigh))).toBeGreaterThan(0);
      }
    }
    expect(weighFor(focusOf('hello', PEOPLE)).max).toBe(1);
    expect(weighFor(focusOf('When did Ada go?', PEOPLE)).max).toBe((1 + WHEN_BOOST) * (1 + PERSON_BOOST));
  });
});
