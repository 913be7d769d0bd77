/** Every module homed assembles: the kernel's own, the model sources, memory, the plugin host, the output, and the turns that use them. */
import type { KernelModule } from '../actors/kernel/kernelModule.ts';
import type { Settings } from '../actors/modules/config.ts';
import { defaultModules } from '../actors/modules/index.ts';
import { llmModule } from '../actors/modules/llmModule.ts';
import { memoryModule } from '../actors/modules/memoryModule.ts';
import { outputModule } from '../actors/modules/outputModule.ts';
import { turnsModule } from '../actors/modules/turnsModule.ts';
import { BUILTIN_PLUGINS, pluginsModule } from '../plugins/host/pluginsModule.ts';
import { REPLAYERS } from './replayers.ts';
import { withDataDir } from './shellWords.ts';

/**
 * `settings`: overrides for this run, laid over settings.json (`homed chat`'s flags); the daemon has none.
 * `dataDir`: the dir they run on, for the commands they tell the person to paste.
 */
export const daemonModules = (settings?: Settings, dataDir?: string): KernelModule[] => [
  ...defaultModules(settings),
  llmModule(dataDir === undefined ? undefined : withDataDir('homed init', dataDir)),
  memoryModule(),
  pluginsModule(BUILTIN_PLUGINS, REPLAYERS),
  outputModule(),
  turnsModule(),
];
