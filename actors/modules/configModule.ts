/** Layer 0: loads the data dir's settings and provides them as the `config` facility. */
import { Facility } from '../kernel/facilities.ts';
import type { KernelModule } from '../kernel/kernelModule.ts';
import { loadSettings } from './config.ts';

export const configModule = (): KernelModule => ({
  name: 'config',
  requires: [Facility.dataDir],
  provides: [Facility.config],
  init(context) {
    context.provide(Facility.config, loadSettings(context.require(Facility.dataDir)));
  },
});
