/**
 * Turns what a handler resolved with into a change the stage admits, or a clear error. Pure;
 * the result is a fresh copy, so a handler that later mutates its value cannot alter it.
 * Nil (null, msgpack nil) and undefined fields count as absent. A deny is never lost: in
 * `before_toolcall` a refused change that carries a deny still denies (fail closed).
 */
import { isPlainObject } from '../../events/index.ts';
import type { ChangeKey, SettableFields, StageChange, StageName } from './stageTypes.ts';

type Capability = Readonly<{ keys: readonly ChangeKey[]; settable: readonly (keyof SettableFields)[] }>;

/** What a handler may change at each stage; after_output is read-only. */
export const STAGE_CAPABILITIES: Readonly<Record<StageName, Capability>> = {
  on_input: { keys: ['set', 'response'], settable: ['input'] },
  pre_action: { keys: ['inject', 'response'], settable: [] },
  post_action: { keys: ['set', 'response'], settable: ['llmText', 'toolCalls'] },
  before_toolcall: { keys: ['deny', 'askApproval', 'rewriteArgs', 'response'], settable: [] },
  after_toolcall: { keys: ['set', 'redact', 'response'], settable: ['toolResult'] },
  before_output: { keys: ['set', 'response'], settable: ['output'] },
  after_output: { keys: [], settable: [] },
};

export type ChangeCheck =
  | Readonly<{ ok: true; change: StageChange | null }>
  /** `denied`: the refused change carried a deny, which still stands (only in before_toolcall). */
  | Readonly<{ ok: false; error: string; denied?: StageChange }>;

const CHANGE_KEYS: readonly string[] = ['set', 'inject', 'response', 'deny', 'askApproval', 'rewriteArgs', 'redact'] satisfies ChangeKey[];

class ChangeRefused extends Error {}

const refuse = (message: string): never => {
  throw new ChangeRefused(message);
};

const kindOf = (value: unknown): string =>
  Array.isArray(value)
    ? 'an array'
    : value === null
      ? 'null'
      : value === undefined
        ? 'nothing'
        : typeof value === 'object'
          ? 'an object'
          : `a ${typeof value}`;

const text = (value: unknown, what: string): string =>
  typeof value === 'string' ? value : refuse(`${what} must be a string, got ${kindOf(value)}`);

const list = (value: unknown, what: string): unknown[] =>
  Array.isArray(value) ? value : refuse(`${what} must be an array, got ${kindOf(value)}`);

const record = (value: unknown, what: string): Record<string, unknown> =>
  isPlainObject(value) ? value : refuse(`${what} must be an object, got ${kindOf(value)}`);

/** Keys whose value is nil (undefined, or null as msgpack nil decodes) count as absent. */
const defined = (value: Record<string, unknown>) => Object.entries(value).filter(([, v]) => v !== undefined && v !== null);

const toolCall = (value: unknown, what: string) => {
  const call = record(value, what);
  return { id: text(call.id, `${what}.id`), name: text(call.name, `${what}.name`), args: record(call.args, `${what}.args`) };
};

const readSet = (value: unknown, stage: StageName): SettableFields => {
  const set: Record<string, unknown> = {};
  for (const [field, v] of defined(record(value, 'set'))) {
    if (!(STAGE_CAPABILITIES[stage].settable as readonly string[]).includes(field)) {
      refuse(`set.${field} is not allowed in ${stage} (settable: ${STAGE_CAPABILITIES[stage].settable.join(', ') || 'nothing'})`);
    }
    set[field] =
      field === 'toolCalls' ? list(v, 'set.toolCalls').map((c, i) => toolCall(c, `set.toolCalls[${i}]`)) : text(v, `set.${field}`);
  }
  return set;
};

const readKey = (key: ChangeKey, value: unknown, stage: StageName): unknown => {
  switch (key) {
    case 'set':
      return readSet(value, stage);
    case 'inject':
      return list(value, 'inject').map((m, i) => text(m, `inject[${i}]`));
    case 'response':
      return text(value, 'response');
    case 'deny': {
      const reason = text(record(value, 'deny').reason, 'deny.reason');
      return reason.trim() ? { reason } : refuse('deny.reason must say why the call is denied');
    }
    case 'askApproval': {
      const reason = text(record(value, 'askApproval').reason, 'askApproval.reason');
      return reason.trim() ? { reason } : refuse('askApproval.reason must say why a person should look at the call');
    }
    case 'rewriteArgs':
      return record(value, 'rewriteArgs');
    case 'redact':
      return list(value, 'redact').map((r, i) => {
        const { find, replaceWith } = record(r, `redact[${i}]`);
        const found = text(find, `redact[${i}].find`);
        return found
          ? { find: found, replaceWith: text(replaceWith, `redact[${i}].replaceWith`) }
          : refuse(`redact[${i}].find must not be empty`);
      });
    default: {
      const unhandled: never = key;
      return refuse(`unknown change '${String(unhandled)}'`);
    }
  }
};

const isEmpty = (value: unknown) => (Array.isArray(value) ? value.length === 0 : isPlainObject(value) && Object.keys(value).length === 0);

const read = (stage: StageName, value: unknown): StageChange | null => {
  if (value === undefined || value === null) return null;
  const raw = record(value, 'a change');
  const allowed = STAGE_CAPABILITIES[stage].keys;
  const change: Record<string, unknown> = {};
  for (const [key, v] of defined(raw)) {
    if (!CHANGE_KEYS.includes(key)) refuse(`unknown change '${key}' (changes: ${CHANGE_KEYS.join(', ')})`);
    if (!allowed.includes(key as ChangeKey)) {
      refuse(
        allowed.length === 0
          ? `${stage} is read-only, but the handler returned '${key}'`
          : `'${key}' is not allowed in ${stage} (allowed: ${allowed.join(', ')})`,
      );
    }
    const checked = readKey(key as ChangeKey, v, stage);
    if (key === 'response' || key === 'deny' || key === 'askApproval' || !isEmpty(checked)) change[key] = checked;
  }
  return Object.keys(change).length > 0 ? change : null;
};

/**
 * Checks a handler's result against what `stage` admits.
 * @example checkChange('before_toolcall', { deny: { reason: 'blocked path' } }) // { ok: true, change: { deny: ... } }
 */
export const checkChange = (stage: StageName, value: unknown): ChangeCheck => {
  let error: string;
  try {
    return { ok: true, change: read(stage, structuredClone(value)) };
  } catch (thrown) {
    error =
      thrown instanceof ChangeRefused
        ? `refused change: ${thrown.message}`
        : `refused change: it is not plain data (${thrown instanceof Error ? thrown.message : String(thrown)})`;
  }
  const denied = stage === 'before_toolcall' ? salvageDeny(value, error) : null;
  return denied ? { ok: false, error, denied: { deny: denied } } : { ok: false, error };
};

/** The deny a refused before_toolcall change carried (anything but nil or false), with its reason when it can be read. */
const salvageDeny = (value: unknown, error: string): { reason: string } | null => {
  let deny: unknown;
  try {
    deny = isPlainObject(value) ? value.deny : undefined;
  } catch {
    return null;
  }
  if (deny === undefined || deny === null || deny === false) return null;
  let reason: unknown;
  try {
    reason = typeof deny === 'string' ? deny : isPlainObject(deny) ? deny.reason : undefined;
  } catch {
    reason = undefined;
  }
  if (typeof reason === 'string' && reason.trim()) return { reason };
  return { reason: `the call was denied by a handler whose change could not be read (${error})` };
};
