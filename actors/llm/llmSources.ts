/**
 * LLM sources from a data dir's settings (`llm.sources`) or the command line, validated with
 * errors that name the setting. A key may be given directly (`apiKey`) or by the name of an
 * environment variable (`apiKeyEnv`); it is handed to the provider and never printed.
 */
import { HttpProvider } from '../../adapters/llm/httpProvider.ts';
import { BUILTIN_ADAPTERS } from '../../adapters/llm/luaAdapter.ts';
import { HologramError } from '../../events/index.ts';
import { setting, type Settings } from '../modules/config.ts';
import { baseUrlProblem } from '../settings/baseUrl.ts';
import { missingLlm, type LlmFacility } from './llmFacility.ts';
import { ProviderChain, type RefusalJournal } from './providerChain.ts';

export class InvalidLlmSource extends HologramError {
  readonly code = 'INVALID_LLM_SOURCE';
}

export type SourceSpec = Readonly<{
  name: string;
  adapter: string;
  baseUrl: string;
  model?: string;
  apiKey?: string;
  contextWindow?: number;
}>;

const checkUrl = (where: string, url: unknown): string => {
  const problem = baseUrlProblem(url);
  if (problem) throw new InvalidLlmSource(`${where}: ${problem}`);
  return url as string;
};

const checkAdapter = (where: string, adapter: unknown): string => {
  if (typeof adapter !== 'string' || !(BUILTIN_ADAPTERS as readonly string[]).includes(adapter)) {
    throw new InvalidLlmSource(`${where}: adapter must be one of ${BUILTIN_ADAPTERS.join(', ')}; got ${JSON.stringify(adapter)}`);
  }
  return adapter;
};

/** How logs, errors and clients name a source: its `name`, else `ADAPTER#N` (N from 1, in order). */
const sourceName = (source: Readonly<Record<string, unknown>>, index: number): string =>
  typeof source.name === 'string' ? source.name : `${String(source.adapter)}#${index + 1}`;

/**
 * Each source of settings.json's `llm.sources` by the name it goes by and its model ('' when it
 * names none), without reading a key: what a client's banner shows.
 */
export const sourceLabels = (settings: Settings): { name: string; model: string }[] => {
  const raw = setting<unknown>(settings, 'llm.sources', []);
  if (!Array.isArray(raw)) return [];
  return raw.flatMap((entry: unknown, i) => {
    if (typeof entry !== 'object' || entry === null) return [];
    const source = entry as Record<string, unknown>;
    return [{ name: sourceName(source, i), model: typeof source.model === 'string' ? source.model : '' }];
  });
};

/** A secret of the data dir's vault by name; throws, saying how to set it, when there is none. */
export type SecretLookup = (name: string) => string;

const noVault: SecretLookup = (name) => {
  throw new InvalidLlmSource(`apiKeySecret ${name}: this command reads no vault; use apiKeyEnv or apiKey here`);
};

/** `llm.sources` of settings.json, in order; a key named by `apiKeySecret` comes from `secrets`. */
export const sourcesFromSettings = (
  settings: Settings,
  env: NodeJS.ProcessEnv = process.env,
  secrets: SecretLookup = noVault,
): SourceSpec[] => {
  const raw = setting<unknown>(settings, 'llm.sources', []);
  if (!Array.isArray(raw)) throw new InvalidLlmSource('settings.json llm.sources must be a list of sources');
  return raw.map((entry: unknown, i): SourceSpec => {
    const where = `settings.json llm.sources[${i}]`;
    if (typeof entry !== 'object' || entry === null) throw new InvalidLlmSource(`${where} must be an object`);
    const source = entry as Record<string, unknown>;
    const adapter = checkAdapter(where, source.adapter);
    const baseUrl = checkUrl(where, source.baseUrl);
    if (source.model !== undefined && typeof source.model !== 'string') throw new InvalidLlmSource(`${where}: model must be a string`);
    if (source.contextWindow !== undefined && !(Number.isSafeInteger(source.contextWindow) && (source.contextWindow as number) > 0)) {
      throw new InvalidLlmSource(`${where}: contextWindow must be a positive whole number of tokens`);
    }
    let apiKey: string | undefined;
    if (typeof source.apiKey === 'string') apiKey = source.apiKey;
    else if (typeof source.apiKeySecret === 'string') {
      try {
        apiKey = secrets(source.apiKeySecret);
      } catch (error) {
        throw new InvalidLlmSource(`${where}: ${(error as Error).message}`);
      }
    } else if (typeof source.apiKeyEnv === 'string') {
      apiKey = env[source.apiKeyEnv];
      if (apiKey === undefined) {
        throw new InvalidLlmSource(
          `${where}: the environment variable ${source.apiKeyEnv} (apiKeyEnv) is not set; ` +
            `export it where homed starts, or keep the key in the vault ('homed secret set ${source.apiKeyEnv}' and "apiKeySecret": "${source.apiKeyEnv}")`,
        );
      }
    }
    return {
      name: sourceName(source, i),
      adapter,
      baseUrl,
      ...(typeof source.model === 'string' ? { model: source.model } : {}),
      ...(apiKey ? { apiKey } : {}),
      ...(source.contextWindow !== undefined ? { contextWindow: source.contextWindow as number } : {}),
    };
  });
};

/** An alias name for a key kept outside the vault: capitals, digits and `_`, starting with a letter. */
const aliasNameOf = (name: string): string =>
  `${/^[A-Za-z]/.test(name) ? '' : 'KEY_'}${name.toUpperCase().replace(/[^A-Z0-9]+/g, '_')}`.slice(0, 64);

/**
 * The model sources' keys that are not in the vault (an `apiKeyEnv` variable's value, an `apiKey`
 * written in settings), each with the name it is scrubbed as: the variable's, or
 * `LLM_<SOURCE>_KEY`. The vault's are scrubbed already.
 */
export const keysOutsideTheVault = (settings: Settings, env: NodeJS.ProcessEnv = process.env): { name: string; value: string }[] => {
  const raw = setting<unknown>(settings, 'llm.sources', []);
  if (!Array.isArray(raw)) return [];
  return raw.flatMap((entry: unknown, i) => {
    if (typeof entry !== 'object' || entry === null) return [];
    const source = entry as Record<string, unknown>;
    if (typeof source.apiKeySecret === 'string') return [];
    if (typeof source.apiKey === 'string') return [{ name: aliasNameOf(`LLM_${sourceName(source, i)}_KEY`), value: source.apiKey }];
    const value = typeof source.apiKeyEnv === 'string' ? env[source.apiKeyEnv] : undefined;
    return value === undefined ? [] : [{ name: aliasNameOf(source.apiKeyEnv as string), value }];
  });
};

/** The variable `--llm ADAPTER=URL` reads its key from: OPENAI_API_KEY, ANTHROPIC_API_KEY, OLLAMA_API_KEY. */
const flagKeyEnv = (adapter: string): string => `${adapter.toUpperCase()}_API_KEY`;

/** `--llm ADAPTER=URL`, its key from ADAPTER_API_KEY. */
export const sourceFromFlag = (spec: string, index: number, env: NodeJS.ProcessEnv = process.env): SourceSpec => {
  const at = spec.indexOf('=');
  const where = `--llm '${spec}'`;
  if (at <= 0) {
    throw new InvalidLlmSource(
      `${where}: expected ADAPTER=URL (e.g. --llm openai=http://127.0.0.1:8000/v1; adapters: ${BUILTIN_ADAPTERS.join(', ')})`,
    );
  }
  const adapter = checkAdapter(where, spec.slice(0, at));
  const baseUrl = checkUrl(where, spec.slice(at + 1));
  const apiKey = env[flagKeyEnv(adapter)];
  return { name: `${adapter}#${index + 1}`, adapter, baseUrl, ...(apiKey ? { apiKey } : {}) };
};

/**
 * `--llm ADAPTER=URL` as an entry of settings.json's `llm.sources`, naming (not holding) the
 * variable its key is in, when that variable is set: what the flag means laid over the settings.
 * @throws InvalidLlmSource naming the flag when the adapter or URL is wrong.
 */
export const sourceSettingFromFlag = (spec: string, index: number, env: NodeJS.ProcessEnv = process.env): Settings => {
  const { name, adapter, baseUrl, apiKey } = sourceFromFlag(spec, index, env);
  return { name, adapter, baseUrl, ...(apiKey ? { apiKeyEnv: flagKeyEnv(adapter) } : {}) };
};

export const providerFor = (source: SourceSpec, modelOverride: string | undefined): HttpProvider => {
  const model = modelOverride ?? source.model;
  if (!model)
    throw new InvalidLlmSource(
      `LLM source '${source.name}' names no model: pass --model NAME (homed chat), or give the source a "model" in settings.json's llm.sources`,
    );
  return new HttpProvider({ ...source, model });
};

/**
 * The `llm` facility from settings.json's `llm.sources` (model: `llm.model`, else the first
 * source's), or why there is none, said so the user knows what to add. Refusals go to `refusals`.
 * `initCommand` is the command that sets one up for this data dir, as the person would paste it.
 */
export const llmFacilityFrom = (
  settings: Settings,
  refusals?: RefusalJournal,
  secrets?: SecretLookup,
  initCommand = 'homed init',
): LlmFacility => {
  const specs = sourcesFromSettings(settings, process.env, secrets);
  if (specs.length === 0) {
    return missingLlm(
      `no LLM source is configured: set one up with ${initCommand} (it asks for the server and model and writes them), or add llm.sources to the data dir's settings.json (see the README), then restart homed`,
    );
  }
  const override = setting<string | undefined>(settings, 'llm.model', undefined);
  const sources = specs.map((spec) => providerFor(spec, override));
  return { chain: new ProviderChain(sources, refusals), model: override ?? sources[0]!.model };
};
