/** The modules the daemon assembles, in no particular order: the graph decides. */
import type { KernelModule } from '../kernel/kernelModule.ts';
import type { Settings } from './config.ts';
import { configModule } from './configModule.ts';
import { projectionsModule } from './projectionsModule.ts';
import { schedulerModule } from './schedulerModule.ts';
import { securityModule } from './securityModule.ts';

/** `settings`: overrides for this run, laid over settings.json (see configModule). */
export const defaultModules = (settings?: Settings): KernelModule[] => [
  configModule(settings),
  securityModule(),
  projectionsModule(),
  schedulerModule(),
];
