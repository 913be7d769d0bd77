/**
 * The settings as a form, from the daemon's own schema reference (pure, no DOM): which settings
 * get a field (one value each: a switch, a number, a word, one of a few, a list of words), what
 * a field shows for the settings as they are, and the settings a field's text makes. The daemon
 * checks the result against the same schema and words the problems; the form only shapes it.
 */
export type FormReference = Readonly<{ key: string; type: string; doc: string; values?: readonly string[] }>;

export type FormKind = 'boolean' | 'integer' | 'number' | 'string' | 'enum' | 'words';

export type FormField = Readonly<{ key: string; path: readonly string[]; kind: FormKind; doc: string; values?: readonly string[] }>;

const KINDS: Readonly<Record<string, FormKind>> = {
  boolean: 'boolean',
  integer: 'integer',
  number: 'number',
  string: 'string',
  enum: 'enum',
  'list of string': 'words',
  'list of enum': 'words',
};

/** The settings a form can hold: one value at a dotted key (not inside a list of objects); model sources have a form of their own. */
export const formFields = (reference: readonly FormReference[]): FormField[] =>
  reference.flatMap((r): FormField[] => {
    const kind = KINDS[r.type];
    if (!kind || r.key.includes('[]') || r.key.startsWith('llm.sources')) return [];
    return [{ key: r.key, path: r.key.split('.'), kind, doc: r.doc, ...(r.values ? { values: r.values } : {}) }];
  });

const valueAt = (settings: unknown, path: readonly string[]): unknown => {
  let at = settings;
  for (const name of path) {
    if (typeof at !== 'object' || at === null || Array.isArray(at)) return undefined;
    at = (at as Record<string, unknown>)[name];
  }
  return at;
};

/** What the field shows: the value set in the file, as text; '' when the default applies. */
export const fieldText = (settings: unknown, field: FormField): string => {
  const value = valueAt(settings, field.path);
  if (value === undefined || value === null) return '';
  if (field.kind === 'words' && Array.isArray(value)) return value.map(String).join(', ');
  return typeof value === 'string' ? value : JSON.stringify(value);
};

/**
 * The value a field's text stands for: undefined for '' (the default), a number for a number
 * that reads as one, a list for words; anything else is passed on as typed, for the daemon's
 * check to name (a number field holding "ten" is refused with the schema's words, not guessed at).
 */
export const fieldValue = (text: string, field: FormField): unknown => {
  const trimmed = text.trim();
  if (trimmed === '') return undefined;
  switch (field.kind) {
    case 'boolean':
      return trimmed === 'true' ? true : trimmed === 'false' ? false : trimmed;
    case 'integer':
    case 'number': {
      const n = Number(trimmed);
      return Number.isFinite(n) ? n : trimmed;
    }
    case 'words':
      return trimmed
        .split(',')
        .map((word) => word.trim())
        .filter(Boolean);
    default:
      return trimmed;
  }
};

/** The settings with each field set to what its text says (a cleared field removed, and an object it leaves empty too). */
export const withFields = (settings: Record<string, unknown>, texts: ReadonlyMap<FormField, string>): Record<string, unknown> => {
  const next = structuredClone(settings);
  for (const [field, text] of texts) {
    const value = fieldValue(text, field);
    const parents: Record<string, unknown>[] = [next];
    for (const name of field.path.slice(0, -1)) {
      const parent = parents.at(-1)!;
      const child = parent[name];
      if (typeof child !== 'object' || child === null || Array.isArray(child)) {
        if (value === undefined) break;
        parent[name] = {};
      }
      parents.push(parent[name] as Record<string, unknown>);
    }
    if (parents.length !== field.path.length) continue; // clearing a value that was never set
    const last = field.path.at(-1)!;
    if (value === undefined) delete parents.at(-1)![last];
    else parents.at(-1)![last] = value;
    for (let i = parents.length - 1; i > 0; i--) {
      if (Object.keys(parents[i]!).length > 0) break;
      delete parents[i - 1]![field.path[i - 1]!];
    }
  }
  return next;
};
