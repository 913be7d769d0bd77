/**
 * The settings as a plugin reads them: never a secret. A key whose path passes through a
 * secret-named field (`apiKey`, `token`, `clientSecret`, `password`, …) reads as nil; any
 * value handed out is a copy with such fields removed and URL credentials cut out. Pure.
 */

const SECRET_WORDS = new Set([
  'key',
  'keys',
  'apikey',
  'token',
  'tokens',
  'secret',
  'secrets',
  'password',
  'passwords',
  'passwd',
  'pwd',
  'passphrase',
  'credential',
  'credentials',
  'auth',
  'authorization',
  'cookie',
  'cookies',
]);

/** Words of a field name: `apiKeyEnv` → api, key, env; `ACCESS_TOKEN` → access, token. */
const wordsOf = (name: string): string[] =>
  name
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .filter(Boolean);

/** True for a field named like a key, token, secret or password. */
export const isSecretName = (name: string): boolean => wordsOf(name).some((word) => SECRET_WORDS.has(word));

const isPlainObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** A URL with its user info and its secret-named query parameters removed; any other string as it is. */
const withoutUrlCredentials = (text: string): string => {
  if (!/^[a-z][a-z0-9+.-]*:\/\//i.test(text)) return text;
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return text;
  }
  if (!url.username && !url.password && ![...url.searchParams.keys()].some(isSecretName)) return text;
  url.username = '';
  url.password = '';
  for (const name of [...url.searchParams.keys()]) if (isSecretName(name)) url.searchParams.delete(name);
  return url.toString();
};

/** A deep copy of `value` without secret-named fields; functions and other non-data read as nil. */
export const withoutSecrets = (value: unknown): unknown => {
  if (typeof value === 'string') return withoutUrlCredentials(value);
  if (value === null || typeof value === 'number' || typeof value === 'boolean') return value;
  if (Array.isArray(value)) return value.map(withoutSecrets);
  if (isPlainObject(value)) {
    const copy: Record<string, unknown> = {};
    for (const [key, field] of Object.entries(value)) if (!isSecretName(key)) copy[key] = withoutSecrets(field);
    return copy;
  }
  return undefined;
};

/**
 * A setting by dotted path (`llm.sources.0.model`) as a plugin may see it, or undefined.
 * @example pluginSetting({ llm: { sources: [{ apiKey: 'sk-1', model: 'm' }] } }, 'llm') // { sources: [{ model: 'm' }] }
 */
export const pluginSetting = (settings: unknown, path: string): unknown => {
  let current: unknown = settings;
  for (const key of path.split('.')) {
    if (isSecretName(key)) return undefined;
    if (typeof current !== 'object' || current === null || !Object.hasOwn(current, key)) return undefined;
    current = (current as Record<string, unknown>)[key];
  }
  return withoutSecrets(current);
};
