/** Every module homed assembles: the kernel's own, the plugin host, and the turns that use both. */
import type { KernelModule } from '../kernel/kernelModule.ts';
import { defaultModules } from '../modules/index.ts';
import { turnsModule } from '../modules/turnsModule.ts';
import { pluginsModule } from '../../plugins/host/pluginsModule.ts';

export const daemonModules = (): KernelModule[] => [...defaultModules(), pluginsModule(), turnsModule()];
