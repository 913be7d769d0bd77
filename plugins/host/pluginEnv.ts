/**
 * The environment a subprocess plugin starts with: an allow-list, never the daemon's own.
 * PATH (its absolute entries), HOME, LANG, LC_ALL, TZ and TMPDIR pass (when set), then what the manifest's `env` asks
 * for by name, except the variables that hold the daemon's LLM keys (`apiKeyEnv`) or a value of
 * the vault; the instance marker by which the next daemon recognises the processes of this
 * start; and where the plugin keeps what it writes.
 */

/** Variables every subprocess plugin gets (when the daemon has them). */
export const ALLOWED_PLUGIN_ENV: readonly string[] = ['PATH', 'HOME', 'LANG', 'LC_ALL', 'TZ', 'TMPDIR'];

/** Set in every plugin process (and inherited by what it forks): names the start it belongs to. */
export const PLUGIN_INSTANCE_ENV = 'HOLOGRAM_PLUGIN_INSTANCE';

/**
 * Names the folder a plugin keeps what it writes in (set in every plugin process): `state/NAME` in
 * the data dir. Its own folder is read-only to it in its sandbox, for what is there is what its
 * user's tools read and run (git's hooks and config, npm's files and node_modules/.bin): a red
 * team's plugin had its user's `git status` and `npm run` run its code.
 */
export const PLUGIN_STATE_ENV = 'HOLOGRAM_PLUGIN_STATE';

export type WithheldVariable = Readonly<{ name: string; why: string }>;

export type PluginEnvironment = Readonly<{ env: Record<string, string>; withheld: readonly WithheldVariable[] }>;

/**
 * @param asked the manifest's `env`
 * @param keyVariables variables that hold the daemon's keys (every LLM source's `apiKeyEnv`)
 * @example pluginEnvironment(['WEATHER_CITY'], process.env, new Set(['OPENAI_API_KEY']), 'run-7').env
 */
export const pluginEnvironment = (
  asked: readonly string[],
  from: Readonly<Record<string, string | undefined>>,
  keyVariables: ReadonlySet<string>,
  instance: string,
  holdsSecret: (value: string) => boolean = () => false,
  /** Its state folder (pluginStateDir), set as PLUGIN_STATE_ENV. */
  state?: string,
): PluginEnvironment => {
  const env: Record<string, string> = {};
  const withheld: WithheldVariable[] = [];
  for (const name of ALLOWED_PLUGIN_ENV) {
    const value = from[name];
    if (value !== undefined) env[name] = name === 'PATH' ? absoluteEntries(value) : value;
  }
  for (const name of asked) {
    if (ALLOWED_PLUGIN_ENV.includes(name)) continue;
    if (keyVariables.has(name)) {
      withheld.push({
        name,
        why: `${name} holds an API key of the daemon (an LLM source's apiKeyEnv); plugins never get the daemon's keys`,
      });
      continue;
    }
    if (name === PLUGIN_INSTANCE_ENV || name === PLUGIN_STATE_ENV) continue;
    const value = from[name];
    if (value !== undefined && holdsSecret(value)) {
      withheld.push({
        name,
        why: `${name}, whose value holds a secret of the vault; a plugin gets a secret only as @{NAME} filled into a tool call`,
      });
    } else if (value !== undefined) env[name] = value;
  }
  env[PLUGIN_INSTANCE_ENV] = instance;
  if (state !== undefined) env[PLUGIN_STATE_ENV] = state;
  return { env, withheld };
};

/**
 * PATH without its empty and relative entries: a plugin starts in its own folder, so through one
 * of those the sandbox's own commands (unshare, mount, setpriv), run before its mounts are locked,
 * would be the plugin's.
 */
const absoluteEntries = (path: string): string =>
  path
    .split(':')
    .filter((entry) => entry.startsWith('/'))
    .join(':');

/** The variables named by `llm.sources[].apiKeyEnv` in the settings. */
export const apiKeyVariables = (sources: unknown): Set<string> => {
  const names = new Set<string>();
  if (!Array.isArray(sources)) return names;
  for (const source of sources) {
    const name = (source as { apiKeyEnv?: unknown } | null)?.apiKeyEnv;
    if (typeof name === 'string') names.add(name);
  }
  return names;
};
