/** A catalog with the build's events plus small test-only types. */
import {
  createDefaultCatalog,
  defineEvent,
  schema as s,
  type EventCatalog,
  type EventOf,
  type HologramEvent,
  type NewEventOf,
} from '../../events/index.ts';

export const TestNoted = defineEvent('TestNoted', s.object({ n: s.integer(), text: s.optional(s.nullable(s.string())) }));

/** Stored at version 1 as `{ name }`, declared at version 2 as `{ fullName }`. */
export const TestRenamed = defineEvent('TestRenamed', s.object({ fullName: s.string() }), {
  schemaVersion: 2,
  upcasters: [{ from: 1, up: (data: { name: string }) => ({ fullName: data.name }) }],
});

export const createTestCatalog = (): EventCatalog => createDefaultCatalog().add(TestNoted).add(TestRenamed);

/** The events a test log holds: the build's and the test-only types. */
export type TestEvent = HologramEvent | EventOf<typeof TestNoted> | EventOf<typeof TestRenamed>;

export const noted = (n: number, id?: string): NewEventOf<TestEvent> => ({ type: 'TestNoted', data: { n }, ...(id ? { id } : {}) });
