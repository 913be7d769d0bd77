/** The modules the daemon assembles, in no particular order: the graph decides. */
import type { KernelModule } from '../kernel/kernelModule.ts';
import { configModule } from './configModule.ts';
import { projectionsModule } from './projectionsModule.ts';
import { schedulerModule } from './schedulerModule.ts';

export const defaultModules = (): KernelModule[] => [configModule(), projectionsModule(), schedulerModule()];
