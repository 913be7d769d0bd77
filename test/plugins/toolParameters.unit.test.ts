/**
 * A tool's parameters schema as providers take it: an object schema whose parts are schemas and
 * whose refs point inside it. Anything else would fail every turn that offers the tool.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { toolParametersProblem } from '../../plugins/host/toolParameters.ts';

const point = { type: 'object', properties: { x: { type: 'number' }, y: { type: 'number' } }, required: ['x', 'y'] };

describe('toolParametersProblem', () => {
  it('takes the schemas tools are written with: nested objects, lists, unions, local refs, enums', () => {
    for (const parameters of [
      { type: 'object' },
      { type: 'object', properties: {} },
      point,
      {
        type: 'object',
        $defs: { point },
        definitions: { 'a/b': { type: 'string' } },
        properties: {
          from: { $ref: '#/$defs/point' },
          path: { type: 'array', items: { $ref: '#/$defs/point' } },
          odd: { $ref: '#/definitions/a~1b' },
          mode: { type: ['string', 'null'], enum: ['fast', 'slow', null] },
          any: { anyOf: [{ type: 'string' }, { type: 'integer' }] },
          self: { $ref: '#' },
          free: { type: 'object', additionalProperties: true },
          mapped: { type: 'object', additionalProperties: { type: 'string' } },
        },
        required: ['from'],
        additionalProperties: false,
      },
    ]) {
      expect(toolParametersProblem(parameters), JSON.stringify(parameters)).toBeUndefined();
    }
  });

  it.each([
    [{ type: 'string' }, /of type "string"/],
    [{ properties: {} }, /of type undefined/],
    [{ type: 'object', properties: { p: { type: 'objekt' } } }, /parameters\.properties\.p\.type "objekt" is no JSON Schema type/],
    [{ type: 'object', properties: { p: 'a string' } }, /parameters\.properties\.p is "a string", not a schema object/],
    [{ type: 'object', properties: [] }, /parameters\.properties must be an object of schemas by name/],
    [{ type: 'object', required: 'p' }, /parameters\.required must be a list of property names/],
    [{ type: 'object', properties: { p: { $ref: '#/$defs/missing' } } }, /\$ref "#\/\$defs\/missing" points to nothing/],
    [{ type: 'object', properties: { p: { $ref: 'https://evil.test/schema.json' } } }, /must point inside the parameters/],
    [{ type: 'object', properties: { p: { $ref: '#/properties/p/__proto__' } } }, /points to nothing/],
    [{ type: 'object', properties: { p: { $ref: '#/properties/%E0%A4%A' } } }, /points to nothing/],
    [{ type: 'object', properties: { p: { anyOf: { type: 'string' } } } }, /anyOf must be a list of schemas/],
    [{ type: 'object', properties: { p: { type: 'array', items: [1] } } }, /items is a list, not a schema object/],
    [{ type: 'object', properties: { p: { enum: 'a' } } }, /enum must be a list/],
  ])('refuses %j, saying where', (parameters, said) => {
    expect(toolParametersProblem(parameters as Record<string, unknown>)).toMatch(said);
  });

  it('finds a bad part wherever it is nested, and a $ref to any part of a sound schema resolves', () => {
    const leaf = fc.constantFrom<unknown>({ type: 'string' }, { type: 'integer' }, { type: 'boolean' }, true);
    const schema = fc.letrec<{ node: unknown }>((tie) => ({
      node: fc.oneof(
        { depthSize: 'small', withCrossShrink: true },
        leaf,
        fc.dictionary(fc.constantFrom('a', 'b', 'c'), tie('node'), { maxKeys: 3 }).map((properties) => ({ type: 'object', properties })),
        tie('node').map((items) => ({ type: 'array', items })),
        fc.array(tie('node'), { minLength: 1, maxLength: 3 }).map((anyOf) => ({ anyOf })),
      ),
    })).node;
    const root = fc
      .dictionary(fc.constantFrom('a', 'b', 'c'), schema, { maxKeys: 3 })
      .map((properties) => ({ type: 'object', properties }));
    fc.assert(
      fc.property(root, fc.nat(), (parameters, pick) => {
        expect(toolParametersProblem(parameters)).toBeUndefined();
        // Every path to an object node inside the schema, as a pointer.
        const pointers: string[] = [];
        const walk = (node: unknown, at: string): void => {
          if (typeof node !== 'object' || node === null) return;
          pointers.push(at);
          for (const [key, value] of Object.entries(node)) walk(value, `${at}/${key}`);
        };
        walk(parameters, '#');
        const target = pointers[pick % pointers.length]!;
        const withRef = structuredClone(parameters) as { properties: Record<string, unknown> };
        withRef.properties.ref = { $ref: target };
        const found = toolParametersProblem(withRef);
        // A pointer to a list or a non-schema map is still something; only its resolving is asked.
        expect(found).toBeUndefined();
        const broken = structuredClone(parameters) as { properties: Record<string, unknown> };
        broken.properties.ref = { $ref: `${target}/nothing-here` };
        expect(toolParametersProblem(broken)).toMatch(/points to nothing in the parameters/);
      }),
    );
  });
});
