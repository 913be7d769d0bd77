import { describe, expect, it } from 'vitest';
import { schema as s } from '../../events/index.ts';

describe('payload schemas', () => {
  const shape = s.object({ level: s.optional(s.integer()), runningTaskId: s.nullable(s.string()) });

  it('lets an optional field be left out, but refuses null there: null is a value, not an absence', () => {
    expect(shape.check({ runningTaskId: 'x' }, '')).toBeUndefined();
    expect(shape.check({ level: 2, runningTaskId: 'x' }, '')).toBeUndefined();
    expect(shape.check({ level: null, runningTaskId: 'x' }, '')).toEqual({ path: 'level', expected: 'integer (optional)', got: 'null' });
  });

  it('needs a nullable field present, as null or its type', () => {
    expect(shape.check({ runningTaskId: null }, '')).toBeUndefined();
    expect(shape.check({}, '')).toEqual({ path: 'runningTaskId', expected: 'string or null', got: 'undefined' });
    expect(shape.check({ runningTaskId: 3 }, '')).toEqual({ path: 'runningTaskId', expected: 'string or null', got: 'number' });
  });

  it('takes either of two shapes for a oneOf field, and names both when a value fits neither', () => {
    const network = s.object({ network: s.oneOf(s.boolean(), s.array(s.string())) });
    expect(network.check({ network: false }, '')).toBeUndefined();
    expect(network.check({ network: ['example.org'] }, '')).toBeUndefined();
    expect(network.check({ network: 'example.org' }, '')).toEqual({
      path: 'network',
      expected: 'boolean or array of string',
      got: 'string',
    });
  });
});
