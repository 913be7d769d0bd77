/**
 * Asks a model server what it serves and whether it answers, for `homed init`: the models it
 * lists (when it has such a route) and one tiny request through the same provider a turn uses.
 */
import { HttpProvider, requestBaseUrl } from './httpProvider.ts';

export type ProbeResult = Readonly<{ models: readonly string[] | null; listError?: string; answer?: string; error?: string }>;

const PROBE_TIMEOUT_MS = 15_000;

/** Where the server lists its models, and how to read the list. */
const listRoute = (adapter: string, baseUrl: string): { url: string; names: (body: unknown) => string[] } => {
  const base = requestBaseUrl(adapter, baseUrl);
  if (adapter === 'ollama') {
    return { url: `${base}/api/tags`, names: (b) => ((b as { models?: { name?: string }[] }).models ?? []).map((m) => String(m.name)) };
  }
  const url = adapter === 'anthropic' ? `${base}/v1/models` : `${base}/models`;
  return { url, names: (b) => ((b as { data?: { id?: string }[] }).data ?? []).map((m) => String(m.id)) };
};

export const listModels = async (adapter: string, baseUrl: string, apiKey?: string): Promise<string[]> => {
  const route = listRoute(adapter, baseUrl);
  const headers: Record<string, string> =
    apiKey === undefined
      ? {}
      : adapter === 'anthropic'
        ? { 'x-api-key': apiKey, 'anthropic-version': '2023-06-01' }
        : { authorization: `Bearer ${apiKey}` };
  const response = await fetch(route.url, { headers, signal: AbortSignal.timeout(PROBE_TIMEOUT_MS) });
  if (!response.ok) throw new Error(`GET ${route.url} answered HTTP ${response.status}`);
  return route.names(await response.json());
};

/** The server's models (asked again unless `listed` gives them) and one tiny request to `source.model`. */
export const probeModel = async (
  source: Readonly<{ adapter: string; baseUrl: string; model: string; apiKey?: string }>,
  listed?: readonly string[],
): Promise<ProbeResult> => {
  let models: readonly string[] | null = listed ?? null;
  let listError: string | undefined;
  if (listed === undefined) {
    try {
      models = await listModels(source.adapter, source.baseUrl, source.apiKey);
    } catch (error) {
      listError = (error as Error).message;
    }
  }
  const provider = new HttpProvider({ name: 'init', ...source });
  try {
    const answer = await provider.complete(
      { model: source.model, stream: false, messages: [{ role: 'user', content: 'Reply with the single word: ready' }], tools: [] },
      { signal: AbortSignal.timeout(PROBE_TIMEOUT_MS) },
    );
    return { models, ...(listError ? { listError } : {}), answer: answer.text.trim() };
  } catch (error) {
    return { models, ...(listError ? { listError } : {}), error: (error as Error).message };
  }
};
