/**
 * A running subprocess plugin as the disk's reserve sees it (`diskReserve.ts`): what its state
 * folder holds, of it what its processes hold removed (what stopping them frees), and a stop that
 * ends once every process of it is gone, so what it held is freed before the disk is looked at.
 */
import type { Timers } from '../../events/index.ts';
import type { ReserveHolder } from './diskReserve.ts';
import { killedAll, type PluginProcess } from './pluginProcess.ts';
import { processInfo, processTree } from './processTable.ts';
import { overQuota, type StateQuota, stateUsage } from './stateQuota.ts';

/** `plugin`'s holder: `faulted` is told why the reserve stops it (a promise: what the stop freed is known after). */
export const reserveHolder = (
  plugin: string,
  child: PluginProcess,
  folder: string,
  quota: StateQuota,
  timers: Timers,
  faulted: (why: Promise<string>) => void,
): ReserveHolder => ({
  plugin,
  measure: async () => {
    const usage = await stateUsage(folder, quota, await processTree(child.pid));
    const seen = usage.unmeasured === undefined;
    return {
      bytes: seen ? usage.bytes : Number.POSITIVE_INFINITY,
      held: seen ? (usage.held ?? 0) : Number.POSITIVE_INFINITY,
      over: overQuota(usage, quota),
    };
  },
  stopFor: async (why) => {
    faulted(why);
    // What it holds is freed only once every process of it is gone, those that left its group included.
    const tree = (await processTree(child.pid)).map(processInfo).filter((p) => p !== null);
    child.kill('SIGKILL');
    await child.exited;
    await killedAll(tree, timers);
  },
});
