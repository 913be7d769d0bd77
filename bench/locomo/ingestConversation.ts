/** Feeds a conversation's turns to a recall system in order, then lets it finish; progress on stderr. */
import { performance } from 'node:perf_hooks';
import { progress } from '../measure.ts';
import type { LocomoConversation } from './locomoData.ts';
import type { RecallSystem } from './recallSystem.ts';

/** ms the ingest took (turns and finishIngest); `label` names what is fed, in the progress line. */
export const ingestConversation = async (system: RecallSystem, conv: LocomoConversation, label: string): Promise<number> => {
  const step = progress(`${conv.name}: ${label} ingest`);
  const start = performance.now();
  for (const [i, turn] of conv.turns.entries()) {
    await system.ingest(turn);
    step(i + 1, conv.turns.length);
  }
  await system.finishIngest(conv.turns.at(-1)?.at ?? 0);
  return performance.now() - start;
};
