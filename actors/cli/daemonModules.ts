/** Every module homed assembles: the kernel's own, memory, the plugin host, and the turns that use them. */
import type { KernelModule } from '../kernel/kernelModule.ts';
import { defaultModules } from '../modules/index.ts';
import { memoryModule } from '../modules/memoryModule.ts';
import { turnsModule } from '../modules/turnsModule.ts';
import { pluginsModule } from '../../plugins/host/pluginsModule.ts';

export const daemonModules = (): KernelModule[] => [...defaultModules(), memoryModule(), pluginsModule(), turnsModule()];
