/** Every replayer `homed replay --verify` (and the web UI's verify) runs, in the order the daemon's actors start. */
import { kernelReplayer, memoryReplayer, schedulerReplayer, turnsReplayer } from '../actors/replay/coreReplayers.ts';
import type { Replayer } from '../actors/replay/replayer.ts';
import { supervisorsReplayer } from '../plugins/host/replaySupervisors.ts';

export const REPLAYERS: readonly Replayer[] = [kernelReplayer, schedulerReplayer, supervisorsReplayer, memoryReplayer, turnsReplayer];
