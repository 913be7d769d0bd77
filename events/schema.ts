/**
 * A tiny payload schema: declares the shape of an event's `data` once, infers its TS type,
 * and validates a value naming the first field that does not match. Pure; no I/O.
 */

export type SchemaIssue = Readonly<{ path: string; expected: string; got: string }>;

export interface Schema<T> {
  readonly describe: string;
  /** Returns the first mismatch, or undefined when `value` fits. */
  check(value: unknown, path: string): SchemaIssue | undefined;
  /** Phantom field carrying the inferred type; never set at run time. */
  readonly _type?: T;
}

export type Infer<S> = S extends Schema<infer T> ? T : never;

const kindOf = (value: unknown): string => {
  if (value === null) return 'null';
  if (typeof value === 'number' && !Number.isFinite(value)) return String(value);
  if (Array.isArray(value)) return 'array';
  if (value instanceof Uint8Array) return 'bytes';
  return typeof value;
};

const leaf = <T>(describe: string, test: (v: unknown) => boolean): Schema<T> => ({
  describe,
  check: (value, path) => (test(value) ? undefined : { path, expected: describe, got: kindOf(value) }),
});

export const string = (): Schema<string> => leaf('string', (v) => typeof v === 'string');
export const nonEmptyString = (): Schema<string> => leaf('non-empty string', (v) => typeof v === 'string' && v.length > 0);
export const number = (): Schema<number> => leaf('number', (v) => typeof v === 'number' && Number.isFinite(v));
export const integer = (): Schema<number> => leaf('integer', (v) => Number.isSafeInteger(v));
export const boolean = (): Schema<boolean> => leaf('boolean', (v) => typeof v === 'boolean');
export const bytes = (): Schema<Uint8Array> => leaf('bytes', (v) => v instanceof Uint8Array);
export const unknown = (): Schema<unknown> => leaf('any value', () => true);

/** A value that fits `a` or `b`. */
export const oneOf = <A, B>(a: Schema<A>, b: Schema<B>): Schema<A | B> => {
  const describe = `${a.describe} or ${b.describe}`;
  return {
    describe,
    check: (value, path) =>
      a.check(value, path) === undefined || b.check(value, path) === undefined
        ? undefined
        : { path, expected: describe, got: kindOf(value) },
  };
};

export const literal = <L extends string | number | boolean>(...values: L[]): Schema<L> =>
  leaf(values.map((v) => JSON.stringify(v)).join(' | '), (v) => (values as unknown[]).includes(v));

/** A field that may be left out. `null` is a value, not an absence: declare it with `nullable`. */
export const optional = <T>(inner: Schema<T>): Schema<T | undefined> => {
  const describe = `${inner.describe} (optional)`;
  return { describe, check: (value, path) => (value === undefined ? undefined : described(inner.check(value, path), path, describe)) };
};

/** A field that is present and may be `null`. */
export const nullable = <T>(inner: Schema<T>): Schema<T | null> => {
  const describe = `${inner.describe} or null`;
  return { describe, check: (value, path) => (value === null ? undefined : described(inner.check(value, path), path, describe)) };
};

/** A mismatch of the field itself names what the wrapper accepts; one deeper inside keeps its own. */
const described = (issue: SchemaIssue | undefined, path: string, describe: string): SchemaIssue | undefined =>
  issue && issue.path === path ? { ...issue, expected: describe } : issue;

export const array = <T>(item: Schema<T>): Schema<readonly T[]> => ({
  describe: `array of ${item.describe}`,
  check: (value, path) => {
    if (!Array.isArray(value)) return { path, expected: `array of ${item.describe}`, got: kindOf(value) };
    for (let i = 0; i < value.length; i++) {
      const issue = item.check(value[i], `${path}[${i}]`);
      if (issue) return issue;
    }
    return undefined;
  },
});

export const record = <T>(item: Schema<T>): Schema<Readonly<Record<string, T>>> => ({
  describe: `record of ${item.describe}`,
  check: (value, path) => {
    if (kindOf(value) !== 'object') return { path, expected: `record of ${item.describe}`, got: kindOf(value) };
    for (const [key, v] of Object.entries(value as Record<string, unknown>)) {
      const issue = item.check(v, `${path}.${key}`);
      if (issue) return issue;
    }
    return undefined;
  },
});

type Shape = Record<string, Schema<unknown>>;
type OptionalKeys<S extends Shape> = {
  [K in keyof S]: undefined extends Infer<S[K]> ? K : never;
}[keyof S];
export type ObjectOf<S extends Shape> = Readonly<
  { [K in Exclude<keyof S, OptionalKeys<S>>]: Infer<S[K]> } & { [K in OptionalKeys<S>]?: Infer<S[K]> }
>;

/** An object with exactly these fields; an unexpected field is a mismatch too. */
export const object = <S extends Shape>(shape: S): Schema<ObjectOf<S>> => ({
  describe: 'object',
  check: (value, path) => {
    if (kindOf(value) !== 'object') return { path, expected: 'object', got: kindOf(value) };
    const fields = value as Record<string, unknown>;
    for (const [key, schema] of Object.entries(shape)) {
      const issue = schema.check(fields[key], path === '' ? key : `${path}.${key}`);
      if (issue) return issue;
    }
    for (const key of Object.keys(fields)) {
      if (!Object.hasOwn(shape, key))
        return { path: path === '' ? key : `${path}.${key}`, expected: 'no such field', got: kindOf(fields[key]) };
    }
    return undefined;
  },
});
