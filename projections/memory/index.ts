/** The memory tiers as projections: L1 context, L2 cold docs, L3 graph, and the holders of blocks. */
export * from './memoryRows.ts';
export * from './contextProjection.ts';
export * from './coldProjection.ts';
export * from './graphProjection.ts';
export * from './blocksProjection.ts';
export * from './scenesProjection.ts';
export * from './heartbeatsProjection.ts';
export * from './recall/index.ts';

import { blocksProjection } from './blocksProjection.ts';
import { coldProjection } from './coldProjection.ts';
import { contextProjection } from './contextProjection.ts';
import { graphProjection } from './graphProjection.ts';
import { heartbeatsProjection } from './heartbeatsProjection.ts';
import { scenesProjection } from './scenesProjection.ts';

export const memoryProjections = () => [
  contextProjection,
  coldProjection,
  graphProjection,
  blocksProjection,
  scenesProjection,
  heartbeatsProjection,
];
