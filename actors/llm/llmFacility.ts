/**
 * The `llm` facility: the one provider chain of the daemon (settings' `llm.sources`) and the
 * model it asks, or why there is none. Turns and the memory's judges all ask through it, so a
 * source refused for its key is refused for all of them.
 */
import type { ProviderChain } from './providerChain.ts';

/** What callers use of the chain: asking it, and the source it asks first. */
export type ModelChain = Pick<ProviderChain, 'complete' | 'primary'>;

export type LlmFacility = Readonly<{ chain: ModelChain; model: string }> | Readonly<{ missing: string; model: string }>;

/** No source is configured: every call fails with what to configure. */
export const missingLlm = (why: string): LlmFacility => ({ missing: why, model: '(none)' });
