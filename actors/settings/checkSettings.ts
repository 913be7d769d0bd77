/**
 * Settings checked against the schema: every problem at once, each naming its key as a dotted
 * path (`llm.sources[0].baseUrl`), an unknown key with the closest known name. Pure; never
 * throws, whatever the JSON.
 */
import { closestNames, isPlainObject } from '../../events/index.ts';
import type { SettingsField } from './settingsField.ts';

export type SettingsProblem = Readonly<{ key: string; problem: string }>;

const kindOf = (value: unknown): string => (value === null ? 'null' : Array.isArray(value) ? 'a list' : typeof value);

const shown = (value: unknown): string => {
  // JSON.stringify writes a number too large for a double (1e309 in the file reads as Infinity) as null.
  if (typeof value === 'number' && !Number.isFinite(value)) return `${value} (a number too large)`;
  const text = JSON.stringify(value) ?? String(value);
  return text.length > 60 ? `${text.slice(0, 57)}...` : text;
};

const join = (path: string, key: string): string => (path ? `${path}.${key}` : key);

const checkField = (value: unknown, field: SettingsField, key: string, problems: SettingsProblem[]): void => {
  const wrong = (problem: string): void => {
    problems.push({ key, problem });
  };
  switch (field.type) {
    case 'json':
      return;
    case 'boolean':
      if (typeof value !== 'boolean') wrong(`must be true or false, got ${shown(value)}`);
      return;
    case 'integer':
    case 'number': {
      if (typeof value !== 'number' || !Number.isFinite(value)) return wrong(`must be a number, got ${shown(value)}`);
      if (field.type === 'integer' && !Number.isSafeInteger(value)) return wrong(`must be a whole number, got ${value}`);
      const max = field.type === 'integer' ? field.max : undefined;
      // With both bounds, the problem names the whole range.
      const range = field.min !== undefined && max !== undefined ? ` (a whole number from ${field.min} to ${max})` : '';
      if (field.min !== undefined && value < field.min) return wrong(`must be at least ${field.min}, got ${value}${range}`);
      if (max !== undefined && value > max) return wrong(`must be at most ${max}, got ${value}${range}`);
      return;
    }
    case 'string': {
      if (typeof value !== 'string') return wrong(`must be a string, got ${shown(value)}`);
      if (field.nonEmpty && value.trim() === '') return wrong('must not be empty');
      const problem = field.check?.(value);
      if (problem) wrong(problem);
      return;
    }
    case 'enum':
      if (typeof value !== 'string' || !field.values.includes(value)) {
        const close = typeof value === 'string' ? closestNames(value, field.values, 1)[0] : null;
        wrong(
          `must be one of ${field.values.map((v) => `"${v}"`).join(', ')}, got ${shown(value)}${close ? `; did you mean "${close}"?` : ''}`,
        );
      }
      return;
    case 'list':
      if (!Array.isArray(value)) {
        const of = field.of.type === 'enum' ? ` of ${field.of.values.map((v) => `"${v}"`).join(', ')}` : '';
        return wrong(`must be a list${of}, got ${kindOf(value)}${of && value === true ? ' (list every one for all)' : ''}`);
      }
      if (field.nonEmpty && value.length === 0) return wrong('must not be an empty list');
      for (const [i, item] of value.entries()) checkField(item, field.of, `${key}[${i}]`, problems);
      if (field.uniqueBy !== undefined) sameValues(value, field.uniqueBy, key, problems);
      return;
    case 'object':
    case 'map': {
      if (!isPlainObject(value)) return wrong(`must be an object, got ${kindOf(value)}`);
      for (const [name, item] of Object.entries(value)) {
        // Own keys only: `fields.__proto__` or `fields.constructor` is Object's, not a setting.
        const own = (table: Readonly<Record<string, SettingsField>> | undefined) =>
          table && Object.hasOwn(table, name) ? table[name] : undefined;
        const known = field.type === 'object' ? own(field.fields) : (own(field.known) ?? field.of);
        if (known) {
          checkField(item, known, join(key, name), problems);
          continue;
        }
        const close = field.type === 'object' ? closestNames(name, Object.keys(field.fields), 1)[0] : null;
        problems.push({ key: join(key, name), problem: `is not a setting${hintFor(field, key, name, item, close)}` });
      }
      if (field.type === 'object') missingOrClashing(value, field, key, problems);
      return;
    }
  }
};

/** The keys an object must have and does not, and the keys of which it may have one but has several. */
const missingOrClashing = (
  value: Record<string, unknown>,
  field: SettingsField & { type: 'object' },
  key: string,
  problems: SettingsProblem[],
): void => {
  for (const name of field.required ?? []) {
    // Said of the object, which the file has: the key it lacks is not there to name.
    if (!Object.hasOwn(value, name)) problems.push({ key, problem: `needs ${name}: ${field.fields[name]?.doc ?? name}` });
  }
  const given = (field.exclusive ?? []).filter((name) => Object.hasOwn(value, name));
  if (given.length > 1) {
    problems.push({ key, problem: `gives ${given.join(' and ')}: they say the same thing, and only one is read; keep one` });
  }
};

/** Objects of a list that share the value of `by`, each after the first it repeats. */
const sameValues = (list: readonly unknown[], by: string, key: string, problems: SettingsProblem[]): void => {
  const first = new Map<unknown, number>();
  for (const [i, item] of list.entries()) {
    if (!isPlainObject(item) || !Object.hasOwn(item, by) || typeof item[by] !== 'string') continue;
    const earlier = first.get(item[by]);
    if (earlier === undefined) first.set(item[by], i);
    else problems.push({ key: `${key}[${i}].${by}`, problem: `is ${shown(item[by])} as ${key}[${earlier}].${by} is; give each its own` });
  }
};

/**
 * What to write instead of an unknown key: a close name; for a dotted key (`scheduler.maxRounds`),
 * that settings.json nests; for a plugin's settings written at the top (`webui.port` or
 * `webui: {port}`), that they go under its name in `plugins`.
 */
const hintFor = (
  field: SettingsField & { type: 'object' | 'map' },
  key: string,
  name: string,
  item: unknown,
  close: string | null | undefined,
): string => {
  const atRoot = key === '' && field.type === 'object' && field.fields.plugins?.type === 'map';
  if (atRoot && name.includes('.')) {
    const parts = name.split('.');
    const path = parts[0]! in field.fields ? parts : ['plugins', ...parts];
    return `; settings.json nests its keys: write ${path.map((p) => `{"${p}": `).join('')}…${'}'.repeat(path.length)}`;
  }
  if (close) return `; did you mean ${join(key, close)}?`;
  return atRoot && isPlainObject(item) ? `; a plugin's settings go under plugins.${name}` : '';
};

/** Settings nest a few levels (a plugin's own settings a few more): deeper is a mistake, and checked no further. */
export const DEEPEST_SETTINGS = 64;

/** Whether `value` nests lists and objects deeper than `levels` (found without recursion, so any depth is safe to ask about). */
export const nestsDeeperThan = (value: unknown, levels: number): boolean => {
  const stack: [unknown, number][] = [[value, 0]];
  for (let next = stack.pop(); next !== undefined; next = stack.pop()) {
    const [item, depth] = next;
    if (typeof item !== 'object' || item === null) continue;
    if (depth >= levels) return true;
    for (const child of Object.values(item)) stack.push([child, depth + 1]);
  }
  return false;
};

/** The problem of settings nested past DEEPEST_SETTINGS, or undefined. */
export const tooDeep = (settings: unknown): SettingsProblem | undefined =>
  nestsDeeperThan(settings, DEEPEST_SETTINGS)
    ? { key: '(the file)', problem: `nests lists and objects more than ${DEEPEST_SETTINGS} levels deep; settings need a few` }
    : undefined;

export const checkSettings = (settings: unknown, schema: SettingsField): SettingsProblem[] => {
  const deep = tooDeep(settings);
  if (deep) return [deep];
  const problems: SettingsProblem[] = [];
  checkField(settings, schema, '', problems);
  return problems.map((p) => (p.key === '' ? { key: '(the file)', problem: p.problem } : p));
};
