/**
 * Whether a tool's `parameters` is a JSON Schema every model provider takes. Every turn offers
 * every tool: a schema a provider refuses (a type it does not know, a `$ref` to nothing or to
 * another document, `required` that is no list of names) fails every turn, not only the
 * plugin's, so it is refused when the tool is registered. Depth is bounded before this is asked.
 */

import { isPlainObject } from '../../events/index.ts';

const TYPES: ReadonlySet<string> = new Set(['object', 'array', 'string', 'number', 'integer', 'boolean', 'null']);
/** Keywords holding one subschema, a list of them, or a map of names to them. */
const ONE = ['items', 'not', 'contains', 'propertyNames', 'if', 'then', 'else'] as const;
const LISTS = ['anyOf', 'oneOf', 'allOf', 'prefixItems'] as const;
const MAPS = ['properties', 'patternProperties', '$defs', 'definitions'] as const;

/** A pointer's part as the key it names (`~1` is '/', `~0` '~', %-escapes decoded), or undefined when an escape is broken. */
const decodedKey = (raw: string): string | undefined => {
  try {
    return decodeURIComponent(raw).replaceAll('~1', '/').replaceAll('~0', '~');
  } catch {
    return undefined; // a malformed %-escape names nothing
  }
};

/** The node a local JSON pointer (`#`, `#/$defs/point`) names in `root`, or undefined. */
const resolvePointer = (root: unknown, ref: string): unknown => {
  if (ref === '#') return root;
  if (!ref.startsWith('#/')) return undefined;
  let node: unknown = root;
  for (const raw of ref.slice(2).split('/')) {
    const key = decodedKey(raw);
    if (key === undefined) return undefined;
    if (!isPlainObject(node) && !Array.isArray(node)) return undefined;
    if (!Object.hasOwn(node, key)) return undefined;
    node = (node as Record<string, unknown>)[key];
  }
  return node;
};

/** What is wrong with the schema `node` at `path` (its subschemas included), or undefined. */
const problemAt = (root: unknown, node: unknown, path: string): string | undefined => {
  if (typeof node === 'boolean') return undefined;
  if (!isPlainObject(node)) return `${path} is ${Array.isArray(node) ? 'a list' : JSON.stringify(node)}, not a schema object`;
  const { type, required, $ref, enum: choices } = node;
  const types = Array.isArray(type) ? type : type === undefined ? [] : [type];
  const unknown = types.find((t) => typeof t !== 'string' || !TYPES.has(t));
  if (unknown !== undefined) return `${path}.type ${JSON.stringify(unknown)} is no JSON Schema type (use ${[...TYPES].join(', ')})`;
  if (required !== undefined && !(Array.isArray(required) && required.every((name) => typeof name === 'string')))
    return `${path}.required must be a list of property names`;
  if (choices !== undefined && !Array.isArray(choices)) return `${path}.enum must be a list`;
  if ($ref !== undefined) {
    if (typeof $ref !== 'string' || !$ref.startsWith('#'))
      return `${path}.$ref ${JSON.stringify($ref)} must point inside the parameters ('#/$defs/NAME'); no other document is fetched`;
    if (resolvePointer(root, $ref) === undefined) return `${path}.$ref ${JSON.stringify($ref)} points to nothing in the parameters`;
  }
  for (const key of ONE) {
    if (node[key] === undefined) continue;
    const found = problemAt(root, node[key], `${path}.${key}`);
    if (found) return found;
  }
  for (const key of LISTS) {
    const list = node[key];
    if (list === undefined) continue;
    if (!Array.isArray(list)) return `${path}.${key} must be a list of schemas`;
    for (const [i, item] of list.entries()) {
      const found = problemAt(root, item, `${path}.${key}[${i}]`);
      if (found) return found;
    }
  }
  for (const key of MAPS) {
    const map = node[key];
    if (map === undefined) continue;
    if (!isPlainObject(map)) return `${path}.${key} must be an object of schemas by name`;
    for (const [name, item] of Object.entries(map)) {
      const found = problemAt(root, item, `${path}.${key}.${name}`);
      if (found) return found;
    }
  }
  const { additionalProperties } = node;
  return additionalProperties === undefined ? undefined : problemAt(root, additionalProperties, `${path}.additionalProperties`);
};

/** Why `parameters` could not be offered to a model, or undefined: an object schema whose parts are schemas and whose refs resolve. */
export const toolParametersProblem = (parameters: Readonly<Record<string, unknown>>): string | undefined => {
  if (parameters.type !== 'object')
    return `has parameters of type ${JSON.stringify(parameters.type)}; a tool's parameters are an object schema ({"type": "object", "properties": {...}})`;
  const found = problemAt(parameters, parameters, 'parameters');
  return found && `has a parameters schema no model provider takes: ${found}`;
};
