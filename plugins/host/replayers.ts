/** Every replayer `homed replay --verify` runs, in the order the daemon's actors start. */
import { kernelReplayer, memoryReplayer, schedulerReplayer, turnsReplayer } from '../../actors/index.ts';
import type { Replayer } from '../../actors/index.ts';
import { supervisorsReplayer } from './replaySupervisors.ts';

export const REPLAYERS: readonly Replayer[] = [kernelReplayer, schedulerReplayer, supervisorsReplayer, memoryReplayer, turnsReplayer];
