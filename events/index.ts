/** Public surface of the event log: types, the store contract, the catalog, codecs, clocks. */
export * from './envelope.ts';
export * from './errors.ts';
export * as schema from './schema.ts';
export type { Schema, Infer, SchemaIssue } from './schema.ts';
export * from './defineEvent.ts';
export * from './eventCatalog.ts';
export * from './eventStore.ts';
export * from './appendRules.ts';
export * from './codec.ts';
export * from './clock.ts';
export * from './tailSubscription.ts';
export * from './inMemoryEventStore.ts';
export * from './catalog/index.ts';
export * from './closestNames.ts';
export * from './jsonSyntax.ts';
export * from './visibleControls.ts';
export * from './wholeNumber.ts';
export * from './plainObject.ts';
