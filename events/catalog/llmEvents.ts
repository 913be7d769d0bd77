/**
 * Facts of the one provider chain. Stream: `llm-sources`. A source refused for its key stays
 * refused across restarts until its key changes; the fingerprint (a hash prefix, never the
 * key) says which key was refused.
 */
import { defineEvent, type EventUnion } from '../defineEvent.ts';
import { object, string } from '../schema.ts';

export const LLM_SOURCES_STREAM = 'llm-sources';

export const llmEvents = {
  LlmSourceRefused: defineEvent('LlmSourceRefused', object({ source: string(), fingerprint: string(), reason: string() })),
} as const;

export type LlmEvent = EventUnion<typeof llmEvents>;
