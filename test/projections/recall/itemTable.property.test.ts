/**
 * The recall index's item table against a Map of rows: after any mix of sets (new ids and
 * existing ones) and deletes, it holds the same items, in the order a Map keeps their ids, and
 * reads every field back as it was set, through `item`, `view` and the single-field readers,
 * whatever slots deletes freed and later sets reused.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ItemTable, type TableRow } from '../../../projections/memory/recall/itemTable.ts';

const id = fc.constantFrom('ctx:a', 'ctx:b', 'doc:c', 'rel:d', 'ctx:e', 'doc:f');
const names = fc.array(fc.constantFrom('D1:1', 'D1:2', 'e-7', 'e-8'), { maxLength: 3 });

const row = (rowId: string): fc.Arbitrary<TableRow> =>
  fc.record({
    id: fc.constant(rowId),
    tier: fc.constantFrom('context' as const, 'cold' as const, 'graph' as const),
    scope: fc.constantFrom('chat:ada', 'chat:bo', ''),
    text: fc.string({ maxLength: 12 }),
    cites: names,
    at: fc.integer({ min: 0, max: 2 ** 45 }),
    person: fc.option(fc.constantFrom('Ada', 'Bo'), { nil: undefined }),
    sources: fc.option(names, { nil: undefined }),
    spokenOf: fc.array(fc.record({ from: fc.integer({ min: 0, max: 1000 }), to: fc.integer({ min: 1001, max: 2000 }) }), { maxLength: 2 }),
    saysWhen: fc.boolean(),
    neighbours: fc.array(fc.oneof(fc.string({ maxLength: 5 }), fc.integer({ min: 1, max: 4 })), { maxLength: 4 }),
  });

type Step = Readonly<{ kind: 'set'; row: TableRow }> | Readonly<{ kind: 'delete'; id: string }>;
const step: fc.Arbitrary<Step> = fc.oneof(
  { weight: 3, arbitrary: id.chain(row).map((r) => ({ kind: 'set' as const, row: r })) },
  { weight: 1, arbitrary: id.map((i) => ({ kind: 'delete' as const, id: i })) },
);

/** What `item` gives: only the fields the row has. */
const expectedItem = (r: TableRow) => ({
  id: r.id,
  tier: r.tier,
  scope: r.scope,
  text: r.text,
  cites: r.cites,
  at: r.at,
  ...(r.person !== undefined ? { person: r.person } : {}),
  ...(r.sources !== undefined ? { sources: r.sources } : {}),
});

describe('ItemTable', () => {
  it('holds and reads back what a Map of its rows holds, in the same order, across reused slots', () => {
    fc.assert(
      fc.property(fc.array(step, { maxLength: 40 }), (steps) => {
        const table = new ItemTable();
        const model = new Map<string, TableRow>();
        for (const s of steps) {
          if (s.kind === 'set') {
            table.set(s.row);
            model.set(s.row.id, s.row);
          } else {
            table.delete(s.id);
            model.delete(s.id);
          }
          expect(table.size).toBe(model.size);
          const slots = [...table.slots()];
          expect(slots.map((slot) => table.id(slot))).toEqual([...model.keys()]);
          for (const slot of slots) {
            const r = model.get(table.id(slot))!;
            expect(table.item(slot)).toEqual(expectedItem(r));
            expect(table.has(r.id) && table.slot(r.id) === slot).toBe(true);
            expect(table.neighbours(slot)).toEqual(r.neighbours);
            expect(table.onlySource(slot)).toBe(r.sources?.length === 1 ? r.sources[0] : undefined);
            const view = table.view(slot);
            expect([view.id, view.tier, view.scope, view.text, view.at, view.person, view.saysWhen]).toEqual([
              r.id,
              r.tier,
              r.scope,
              r.text,
              r.at,
              r.person,
              r.saysWhen,
            ]);
            expect(view.sources).toEqual(r.sources);
            expect(view.spokenOf).toEqual(r.spokenOf);
          }
          for (const gone of ['ctx:a', 'ctx:b', 'doc:c', 'rel:d', 'ctx:e', 'doc:f'].filter((i) => !model.has(i))) {
            expect(table.has(gone)).toBe(false);
          }
        }
      }),
      { numRuns: 300 },
    );
  });

  it('refuses a row whose tier is none of context, cold and graph, naming the item', () => {
    const table = new ItemTable();
    const spoiled = { id: 'doc:2', tier: 'attic', scope: '', text: 't', cites: [], at: 0, spokenOf: [], saysWhen: false, neighbours: [] };
    expect(() => table.set(spoiled as unknown as TableRow)).toThrow(/doc:2 has no tier of context, cold, graph: attic/);
    expect(table.size).toBe(0);
  });
});
