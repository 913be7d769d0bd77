/**
 * Declares an event type once: its name, current schema version, payload schema and the
 * upcasters that lift older stored versions to the current one. Pure.
 */
import type { Infer, Schema } from './schema.ts';

/** Lifts a payload stored at version `from` to version `from + 1`. */
// biome-ignore lint/suspicious/noExplicitAny: an upcaster reads a payload of a version no type describes any more
export type Upcaster = Readonly<{ from: number; up: (data: any) => unknown }>;

// biome-ignore lint/suspicious/noExplicitAny: a definition of any payload type (Schema is invariant in T)
export type EventDefinition<T extends string = string, S extends Schema<any> = Schema<any>> = Readonly<{
  type: T;
  schemaVersion: number;
  schema: S;
  upcasters: readonly Upcaster[];
}>;

// biome-ignore lint/suspicious/noExplicitAny: a definition of any payload type (Schema is invariant in T)
export const defineEvent = <T extends string, S extends Schema<any>>(
  type: T,
  schema: S,
  options: { schemaVersion?: number; upcasters?: readonly Upcaster[] } = {},
): EventDefinition<T, S> => ({
  type,
  schema,
  schemaVersion: options.schemaVersion ?? 1,
  upcasters: options.upcasters ?? [],
});

/** The event (type + data) that a definition describes, for building unions. */
export type EventOf<D> = D extends EventDefinition<infer T, infer S> ? Readonly<{ type: T; data: Infer<S> }> : never;

/** The union of events declared by a record of definitions. */
export type EventUnion<R extends Record<string, EventDefinition>> = EventOf<R[keyof R]>;

/** The type names of a record of definitions, typed. */
export const typesOf = <R extends Record<string, EventDefinition>>(definitions: R): Extract<keyof R, string>[] =>
  Object.keys(definitions) as Extract<keyof R, string>[];
