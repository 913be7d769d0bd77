/**
 * What the kernel needs of an LLM source: chat, streaming chat and a declared context window.
 * Errors are typed so the provider chain can tell a bad key (401/403) from a passing failure.
 */
import { HologramError } from '../../events/index.ts';
import type { CompletionRequest, CompletionResponse, StreamDelta } from './llmTypes.ts';

export type CallOptions = Readonly<{
  signal?: AbortSignal;
  /** Each streamed delta, as it arrives (streaming calls only). */
  onDelta?: (delta: StreamDelta) => void;
}>;

export interface Provider {
  readonly name: string;
  /** Tokens the model accepts, when the source declares it. */
  readonly contextWindow: number | undefined;
  /** A fingerprint of the credentials in use (never the key itself): a new key is a new chance. */
  readonly credentialFingerprint: string;
  complete(request: CompletionRequest, options?: CallOptions): Promise<CompletionResponse>;
}

/** The source answered with an HTTP error status. */
export class ProviderHttpError extends HologramError {
  readonly code = 'PROVIDER_HTTP_ERROR';
  constructor(
    readonly source: string,
    readonly status: number,
    readonly detail: string,
  ) {
    super(`LLM source '${source}' answered HTTP ${status}: ${detail}`);
  }

  /** 401/403: the credentials are wrong; retrying with the same key cannot help. */
  get isAuthFailure(): boolean {
    return this.status === 401 || this.status === 403;
  }
}

/** The call was cancelled (stop, interrupt): not a failure of the source. */
export class ProviderCallAborted extends HologramError {
  readonly code = 'PROVIDER_CALL_ABORTED';
  constructor(readonly source: string) {
    super(`the call to LLM source '${source}' was cancelled`);
  }
}

/** Anything else: network failure, malformed answer, a broken stream. */
export class ProviderCallFailed extends HologramError {
  readonly code = 'PROVIDER_CALL_FAILED';
  constructor(
    readonly source: string,
    readonly reason: string,
    options?: { cause?: unknown },
  ) {
    super(`LLM source '${source}' failed: ${reason}`, options);
  }
}
