/**
 * The provider chain: sources in configured order. A 401/403 marks a source unavailable
 * until its credentials change; any other failure falls through to the next source; a
 * cancelled call is not retried and goes no further; when every source fails the error
 * names each one and why (never a key). A refusal is a fact: it is recorded before the chain
 * moves on, and a chain restored from the recorded refusals skips the same sources.
 */
import { HologramError, type EventNamed } from '../../events/index.ts';
import { ProviderCallAborted, ProviderHttpError, type CallOptions, type Provider } from '../../adapters/llm/provider.ts';
import type { CompletionRequest, CompletionResponse } from '../../adapters/llm/llmTypes.ts';

export class AllProvidersFailed extends HologramError {
  readonly code = 'ALL_PROVIDERS_FAILED';
  constructor(readonly failures: readonly { source: string; reason: string }[]) {
    super(
      failures.length === 0
        ? 'no LLM source is configured or available; add one to settings.json (llm.sources) or pass --llm NAME=URL'
        : `every LLM source failed: ${failures.map((f) => `${f.source}: ${f.reason}`).join('; ')}`,
    );
  }
}

export type ChainAttempt = Readonly<{ source: string; outcome: 'answered' | 'failed' | 'skipped' | 'aborted'; reason?: string }>;

export type SourceRefusal = EventNamed<'LlmSourceRefused'>['data'];

/** Where refusals are recorded, and those recorded before (source name → refused fingerprint). */
export type RefusalJournal = Readonly<{
  refused: ReadonlyMap<string, string>;
  record(refusal: SourceRefusal): Promise<void>;
}>;

/** The refusals in effect after `events`, in log order: the last one per source. */
export const refusalsFrom = (events: readonly Readonly<{ data: SourceRefusal }>[]): Map<string, string> =>
  new Map(events.map((event) => [event.data.source, event.data.fingerprint]));

export class ProviderChain {
  /** Sources refused for their credentials, by name → the fingerprint that was refused. */
  private readonly refused: Map<string, string>;

  constructor(
    private readonly sources: readonly Provider[],
    private readonly journal?: RefusalJournal,
  ) {
    this.refused = new Map(journal?.refused);
  }

  /** The first source that is not marked unavailable (for its context window). */
  primary(): Provider | undefined {
    return this.sources.find((s) => !this.isRefused(s));
  }

  private isRefused(source: Provider): boolean {
    return this.refused.get(source.name) === source.credentialFingerprint;
  }

  async complete(
    request: CompletionRequest,
    options: CallOptions & { onAttempt?: (attempt: ChainAttempt) => void } = {},
  ): Promise<CompletionResponse & { source: string }> {
    const failures: { source: string; reason: string }[] = [];
    for (const source of this.sources) {
      if (this.isRefused(source)) {
        failures.push({ source: source.name, reason: 'unavailable: its credentials were refused (change the key to retry it)' });
        options.onAttempt?.({ source: source.name, outcome: 'skipped' });
        continue;
      }
      if (options.signal?.aborted) throw new ProviderCallAborted(source.name);
      try {
        const response = await source.complete(request, options);
        options.onAttempt?.({ source: source.name, outcome: 'answered' });
        return { ...response, source: source.name };
      } catch (error) {
        if (error instanceof ProviderCallAborted || options.signal?.aborted) {
          options.onAttempt?.({ source: source.name, outcome: 'aborted' });
          throw error instanceof ProviderCallAborted ? error : new ProviderCallAborted(source.name);
        }
        const reason = (error as Error).message ?? String(error);
        if (error instanceof ProviderHttpError && error.isAuthFailure) {
          await this.journal?.record({ source: source.name, fingerprint: source.credentialFingerprint, reason });
          this.refused.set(source.name, source.credentialFingerprint);
        }
        failures.push({ source: source.name, reason });
        options.onAttempt?.({ source: source.name, outcome: 'failed', reason });
      }
    }
    throw new AllProvidersFailed(failures);
  }
}
