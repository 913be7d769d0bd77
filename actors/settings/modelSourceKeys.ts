/**
 * The model sources of settings as where their keys go: each source's name, how it gives its key
 * and its URL. Read by the web UI's settings desk (which sends no key somewhere new) and by
 * `homed secret set` (which names where a key goes). Pure.
 */
import { isPlainObject } from '../../events/index.ts';

/** How a model source gives its key: a vault secret's name, an environment variable's name, or the key itself. */
export type SourceKey = Readonly<{ kind: 'apiKeySecret' | 'apiKeyEnv' | 'apiKey'; ref: string }>;

const KEY_KINDS = ['apiKeySecret', 'apiKeyEnv', 'apiKey'] as const;

/** The model sources of `settings` (anything parsed from settings.json), each with its name, key and URL where they are strings. */
export const modelSourcesOf = (settings: unknown): Readonly<{ name?: string; key?: SourceKey; baseUrl?: string }>[] => {
  const sources = ((settings as { llm?: { sources?: unknown } } | null)?.llm?.sources ?? []) as unknown;
  if (!Array.isArray(sources)) return [];
  return sources.map((s) => {
    const source = (isPlainObject<unknown>(s) ? s : {}) as Record<string, unknown>;
    const kind = KEY_KINDS.find((k) => typeof source[k] === 'string');
    const { name, baseUrl } = source;
    return {
      ...(typeof name === 'string' ? { name } : {}),
      ...(kind ? { key: { kind, ref: source[kind] as string } } : {}),
      ...(typeof baseUrl === 'string' ? { baseUrl } : {}),
    };
  });
};
