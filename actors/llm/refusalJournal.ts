/**
 * The provider chain's refusals, journaled like every other decision: each is recorded as the
 * declared event it is (`LlmSourceRefused`, stream `llm-sources`) before the chain moves on,
 * and the refusals in effect are read back from that stream at start.
 */
import { LLM_SOURCES_STREAM, type Clock, type EventStore } from '../../events/index.ts';
import { Journal } from '../journal/journal.ts';
import { refusalsFrom, type RefusalJournal, type SourceRefusal } from './providerChain.ts';

export const openRefusalJournal = async (
  store: EventStore,
  clock: Clock,
  onRefused?: (refusal: SourceRefusal) => void,
): Promise<RefusalJournal> => {
  const recorded = await store.readStream(LLM_SOURCES_STREAM);
  const journal = new Journal(store, LLM_SOURCES_STREAM, 'as-event');
  return {
    refused: refusalsFrom(recorded.filter((event) => event.type === 'LlmSourceRefused')),
    record: async (refusal) => {
      const message = { type: 'LlmSourceRefused', data: refusal, at: clock.now() };
      await journal.serially(() => journal.record(message, []));
      onRefused?.(refusal);
    },
  };
};
