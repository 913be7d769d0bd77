/** The provider chain's refusals as facts in the `llm-sources` stream: read back at start, appended as they happen. */
import { LLM_SOURCES_STREAM, type EventStore } from '../../events/index.ts';
import { refusalsFrom, type RefusalJournal, type SourceRefusal } from './providerChain.ts';

export const openRefusalJournal = async (store: EventStore, onRefused?: (refusal: SourceRefusal) => void): Promise<RefusalJournal> => {
  const recorded = await store.readStream(LLM_SOURCES_STREAM);
  return {
    refused: refusalsFrom(recorded.filter((event) => event.type === 'LlmSourceRefused')),
    record: async (refusal) => {
      await store.append(LLM_SOURCES_STREAM, [{ type: 'LlmSourceRefused', data: refusal }]);
      onRefused?.(refusal);
    },
  };
};
