/**
 * Settings as the web UI edits them: read with every secret-looking value hidden, checked
 * against the daemon's one schema before anything is written (its problems are the answer), and
 * written whole (a temporary file renamed, 0600). A hidden value sent back unchanged keeps what
 * the file held. Keys go to the vault, never to settings or the page; a source's connection is
 * tried with the same probe `homed init` uses. What is saved applies when homed starts again.
 */
import { chmodSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  checkSettings,
  keptToolsGrant,
  modelSourcesOf,
  probeModel,
  type ProbeResult,
  SETTINGS_FILE,
  SETTINGS_SCHEMA,
  type SettingsField,
  type SettingsProblem,
  SecretVault,
  SecretVaultError,
  type SourceKey,
  tooDeep,
} from '../../actors/index.ts';
import { describeJsonSyntaxError, isPlainObject } from '../../events/index.ts';
import { writeFileAtomic } from '../builtin/shared/writeFileAtomic.ts';

/** What the page gets instead of a secret-looking value. */
export const HIDDEN = '(hidden)';
const SECRET_KEY = /key|secret|token|password|passwd|auth(?!or)|cookie|session|credential|webhook|signature|private/i;
/** A value that is a credential whatever its key says: an Authorization header's value. */
const CREDENTIAL_VALUE = /^\s*(?:basic|bearer|token|digest)\s+\S{8,}/i;
/** Keys that name where a secret is, not the secret. */
const NAMES_A_SECRET = /Secret$|Env$/;

export type SettingsReference = Readonly<{ key: string; type: string; doc: string; values?: readonly string[] }>;

export type SourceProbe = Readonly<{ adapter: string; baseUrl: string; model: string; apiKey?: string; apiKeySecret?: string }>;

type Json = unknown;

/** Whether `text` is a URL carrying credentials: a user or password, or a secret-looking query parameter. */
const urlWithCredentials = (text: string): boolean => {
  if (!/^[a-z][a-z0-9+.-]*:\/\//i.test(text)) return false;
  try {
    const url = new URL(text);
    return url.username !== '' || url.password !== '' || [...url.searchParams.keys()].some((name) => SECRET_KEY.test(name));
  } catch {
    return false;
  }
};

/** `value` with every string under a secret-looking key, every credential-looking value and every URL carrying credentials replaced by HIDDEN. */
export const hideSecrets = (value: Json, key = ''): Json => {
  if (typeof value === 'string') {
    const secretKey = SECRET_KEY.test(key) && !NAMES_A_SECRET.test(key);
    return secretKey || CREDENTIAL_VALUE.test(value) || urlWithCredentials(value) ? HIDDEN : value;
  }
  if (Array.isArray(value)) return value.map((item) => hideSecrets(item, key));
  if (isPlainObject<Json>(value)) return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, hideSecrets(v, k)]));
  return value;
};

/** `edited` with each HIDDEN put back to what `stored` holds at the same place (dropped where it holds nothing). */
export const restoreHidden = (edited: Json, stored: Json): Json => {
  if (edited === HIDDEN) return typeof stored === 'string' ? stored : undefined;
  if (Array.isArray(edited)) return edited.map((item, i) => restoreHidden(item, Array.isArray(stored) ? stored[i] : undefined));
  if (isPlainObject<Json>(edited)) {
    const entries = Object.entries(edited)
      .map(([k, v]) => [k, restoreHidden(v, isPlainObject<Json>(stored) ? stored[k] : undefined)] as const)
      .filter(([, v]) => v !== undefined);
    return Object.fromEntries(entries);
  }
  return edited;
};

/** Keys that say where a setting's holder sends what it has (a plugin's server, its webhook). */
const ADDRESS_KEY = /url|uri|host|endpoint|server|address|webhook|domain/i;

/**
 * Where `edited` keeps a hidden value as stored (sent back as HIDDEN) while changing, beside it,
 * where its holder sends things: a red team kept a plugin's hidden token and moved its URL to
 * their server. A value the page typed again it knows; a hidden one goes nowhere new from the page.
 * (Model sources are judged by where they send their key, keysSentElsewhere.)
 */
export const hiddenMoved = (edited: Json, stored: Json, path = ''): SettingsProblem[] => {
  if (path === 'llm.sources') return [];
  if (Array.isArray(edited)) {
    return edited.flatMap((item, i) => hiddenMoved(item, Array.isArray(stored) ? stored[i] : undefined, `${path}[${i}]`));
  }
  if (!isPlainObject<Json>(edited)) return [];
  const was = isPlainObject<Json>(stored) ? stored : {};
  const kept = Object.keys(edited).filter((key) => edited[key] === HIDDEN && typeof was[key] === 'string');
  const moved = Object.entries(edited).find(
    ([key, value]) => typeof value === 'string' && value !== HIDDEN && ADDRESS_KEY.test(key) && was[key] !== value,
  );
  const here: SettingsProblem[] =
    kept.length > 0 && moved
      ? [
          {
            key: path ? `${path}.${moved[0]}` : moved[0],
            problem: `would send the hidden ${kept.join(', ')} kept here to ${JSON.stringify(moved[1]).slice(0, 120)}: type ${kept.join(', ')} again to send ${kept.length > 1 ? 'them' : 'it'} somewhere new`,
          },
        ]
      : [];
  return [...here, ...Object.entries(edited).flatMap(([key, value]) => hiddenMoved(value, was[key], path ? `${path}.${key}` : key))];
};

const typeOf = (field: SettingsField): string =>
  field.type === 'list' ? `list of ${typeOf(field.of)}` : field.type === 'map' ? `map of ${typeOf(field.of)}` : field.type;

/** Every documented setting, as dotted keys (`llm.sources[].model`), for the page's reference. */
export const settingsReference = (field: SettingsField = SETTINGS_SCHEMA, key = ''): SettingsReference[] => {
  const here: SettingsReference[] = key
    ? [{ key, type: typeOf(field), doc: field.doc, ...(field.type === 'enum' ? { values: field.values } : {}) }]
    : [];
  switch (field.type) {
    case 'object':
      return [...here, ...Object.entries(field.fields).flatMap(([k, f]) => settingsReference(f, key ? `${key}.${k}` : k))];
    case 'list':
      return [...here, ...(field.of.type === 'object' ? settingsReference(field.of, `${key}[]`).filter((r) => r.key !== `${key}[]`) : [])];
    case 'map':
      return [...here, ...Object.entries(field.known ?? {}).flatMap(([k, f]) => settingsReference(f, `${key}.${k}`))];
    default:
      return here;
  }
};

export class SettingsDesk {
  /** `scrub`: every string of a value with the vault's secrets as their aliases, in every form the firewall knows. */
  constructor(
    private readonly dataDir: string,
    private readonly scrub: <T>(value: T) => T = (value) => value,
  ) {}

  private path(): string {
    return join(this.dataDir, SETTINGS_FILE);
  }

  /** The file's settings; {} when there is none; why not, when it is not a JSON object. */
  private stored(): Record<string, Json> | Readonly<{ broken: string }> {
    let text: string;
    try {
      text = readFileSync(this.path(), 'utf8');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return {};
      return { broken: `${this.path()} cannot be read: ${(error as Error).message}` };
    }
    try {
      const parsed: unknown = JSON.parse(text);
      if (!isPlainObject<Json>(parsed)) return { broken: `${this.path()} does not hold a JSON object` };
      const deep = tooDeep(parsed);
      return deep ? { broken: `${this.path()} ${deep.problem}; saving here replaces it` } : parsed;
    } catch (error) {
      return { broken: `${this.path()} is not valid JSON at ${describeJsonSyntaxError(text, error as Error)}; saving here replaces it` };
    }
  }

  read(): Readonly<{ settings: Json; broken?: string; reference: readonly SettingsReference[]; secrets: readonly string[]; file: string }> {
    const stored = this.stored();
    const broken = 'broken' in stored && typeof stored.broken === 'string' ? stored.broken : undefined;
    return {
      settings: broken ? {} : hideSecrets(stored),
      ...(broken ? { broken } : {}),
      reference: settingsReference(),
      secrets: SecretVault.open(this.dataDir).names(),
      file: this.path(),
    };
  }

  /** Writes `edited` (hidden values kept as stored) if it fits the schema; else its problems, nothing written. */
  async save(edited: Json): Promise<Readonly<{ problems: readonly SettingsProblem[] }>> {
    if (!isPlainObject<Json>(edited)) return { problems: [{ key: '(settings)', problem: 'must be a JSON object of settings' }] };
    // Before any walk over it: hiding and restoring recurse.
    const deep = tooDeep(edited);
    if (deep) return { problems: [deep] };
    const stored = this.stored();
    const before = 'broken' in stored ? {} : stored;
    const settings = restoreHidden(edited, before);
    const problems = [
      ...checkSettings(settings, SETTINGS_SCHEMA),
      ...this.keysSentElsewhere(settings, before),
      ...hiddenMoved(edited, before),
    ];
    if (problems.length === 0) {
      await writeFileAtomic(this.path(), `${JSON.stringify(settings, null, 2)}\n`);
      chmodSync(this.path(), 0o600);
    }
    return { problems };
  }

  /** Stores a secret in the vault (for `tools`, as `homed secret set --tools`); its value is never read back. */
  setSecret(name: string, value: string, tools: readonly string[] = []): void {
    const kept = keptToolsGrant(tools);
    if (kept !== undefined) throw new SecretVaultError(kept);
    SecretVault.open(this.dataDir).set(name, value, tools, { fromPage: true });
  }

  /**
   * A key goes from the page only where the saved model sources send it, unless the page gave it:
   * a red team's page moved a source's URL to a server of theirs, or dropped the source in one save
   * and named the key with their server in the next, or kept a source's hidden `apiKey` and changed
   * its URL, or added a source sending one of homed's environment variables; the next start or a
   * probe sent the key there. Where such a key goes is the owner's to change, by hand in the file;
   * a vault key the page set itself, or an `apiKey` it typed, it knows already, and may send anywhere.
   */
  private keysSentElsewhere(settings: Json, stored: Json): SettingsProblem[] {
    const vault = SecretVault.open(this.dataDir);
    const savedSources = modelSourcesOf(stored);
    const saved = new Set(savedSources.flatMap((s) => (s.key && s.baseUrl !== undefined ? [sends(s.key, s.baseUrl)] : [])));
    const savedInline = new Set(savedSources.flatMap((s) => (s.key?.kind === 'apiKey' ? [s.key.ref] : [])));
    return modelSourcesOf(settings).flatMap(({ key, baseUrl }, i) => {
      if (key === undefined || baseUrl === undefined || saved.has(sends(key, baseUrl))) return [];
      if (key.kind === 'apiKeySecret' && vault.setFromPage(key.ref)) return [];
      if (key.kind === 'apiKey' && !savedInline.has(key.ref)) return [];
      const origins = originsSending(key, stored);
      return [
        {
          key: `llm.sources[${i}].baseUrl`,
          problem:
            `would send ${keyNamed(key)} to ${originOf(baseUrl)}; the saved sources send it ${origins.length ? `only to ${origins.join(', ')}` : 'nowhere'}, ` +
            `and the page sends a key it did not set nowhere new: edit ${this.path()} by hand to send it there`,
        },
      ];
    });
  }

  /**
   * A vault key goes only where a saved model source sends it (or anywhere, set from the page):
   * the probe takes any URL, and whoever holds the page's token would otherwise have the key sent
   * to a server of theirs. @throws SecretVaultError naming where the key may go
   */
  private refuseSendingElsewhere(name: string, baseUrl: string): void {
    const stored = this.stored();
    const key: SourceKey = { kind: 'apiKeySecret', ref: name };
    const origins = 'broken' in stored ? [] : originsSending(key, stored);
    if (origins.includes(originOf(baseUrl)) || SecretVault.open(this.dataDir).setFromPage(name)) return;
    throw new SecretVaultError(
      `${name} is sent only to the servers of the saved model sources that name it (${origins.join(', ') || 'none'}); ` +
        'name it in a source in settings.json by hand, set it again from this page, or give the key itself to try another server',
    );
  }

  async probe(source: SourceProbe): Promise<ProbeResult> {
    const vault = source.apiKeySecret ? SecretVault.open(this.dataDir) : undefined;
    // A secret set for tools is filled only into them: a probe, which may go to any URL, never sends it.
    const tools = source.apiKeySecret ? (vault?.toolsOf(source.apiKeySecret) ?? []) : [];
    if (tools.length > 0) {
      throw new SecretVaultError(
        `${source.apiKeySecret} is set for tools (${tools.join(', ')}) and is filled only into them; a model source's key is a secret set without --tools`,
      );
    }
    if (source.apiKeySecret) this.refuseSendingElsewhere(source.apiKeySecret, source.baseUrl);
    const apiKey = source.apiKey ?? (source.apiKeySecret ? vault!.get(source.apiKeySecret) : undefined);
    const result = await probeModel({
      adapter: source.adapter,
      baseUrl: source.baseUrl,
      model: source.model,
      ...(apiKey ? { apiKey } : {}),
    });
    // A server may echo what it was sent, in any field (a red team's named its models with it): the key never goes
    // back to the page, a vault's in no form the firewall knows.
    const hide = (text: string): string => (apiKey ? text.split(apiKey).join(HIDDEN) : text);
    return this.scrub({
      ...result,
      ...(result.models ? { models: result.models.map(hide) } : {}),
      ...(result.answer !== undefined ? { answer: hide(result.answer) } : {}),
      ...(result.error ? { error: hide(result.error) } : {}),
      ...(result.listError ? { listError: hide(result.listError) } : {}),
    });
  }
}

/** A key and where it goes, as one string. */
const sends = (key: SourceKey, baseUrl: string): string => JSON.stringify([key.kind, key.ref, originOf(baseUrl)]);

/** Where the sources of `settings` send `key`. */
const originsSending = (key: SourceKey, settings: Json): string[] =>
  modelSourcesOf(settings).flatMap((s) =>
    s.key?.kind === key.kind && s.key.ref === key.ref && s.baseUrl !== undefined ? [originOf(s.baseUrl)] : [],
  );

/** How a problem names a key (never by its value). */
const keyNamed = (key: SourceKey): string =>
  key.kind === 'apiKeySecret'
    ? `the vault key ${key.ref}`
    : key.kind === 'apiKeyEnv'
      ? `the value of homed's environment variable ${key.ref}`
      : 'the apiKey the file holds';

/** Where a URL sends what it is given: its scheme, host and port (the text itself when it is no URL). */
const originOf = (url: string): string => {
  try {
    return new URL(url).origin;
  } catch {
    return url;
  }
};
