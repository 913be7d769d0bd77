/** Public surface of the projections: the definition type and every read model of this build. */
import { modulesProjection } from './kernel/modulesProjection.ts';
import type { Projection } from './projection.ts';
import { streamsProjection } from './streams/streamsProjection.ts';
import { schedulerProjection } from './scheduler/schedulerProjection.ts';
import { memoryProjections } from './memory/index.ts';

export * from './projection.ts';
export { modulesProjection } from './kernel/modulesProjection.ts';
export { streamsProjection, openStreams } from './streams/streamsProjection.ts';
export { streamCatalog, type StreamEntry } from './streams/streamCatalog.ts';
export { schedulerProjection } from './scheduler/schedulerProjection.ts';
export * from './scheduler/schedulerView.ts';
export * from './memory/index.ts';

/** Every projection the daemon maintains, in the order they are applied. */
export const allProjections = (): readonly Projection[] => [
  modulesProjection,
  schedulerProjection,
  streamsProjection,
  ...memoryProjections(),
];
