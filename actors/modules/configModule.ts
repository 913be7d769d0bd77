/**
 * Layer 0: loads the data dir's settings and provides them as the `config` facility; `overrides`
 * (one run's, e.g. `homed chat --model`) are laid over the file's, through the same schema.
 */
import { Facility } from '../kernel/facilities.ts';
import type { KernelModule } from '../kernel/kernelModule.ts';
import { loadSettings, type Settings } from './config.ts';

export const configModule = (overrides?: Settings): KernelModule => ({
  name: 'config',
  requires: [Facility.dataDir],
  provides: [Facility.config],
  init(context) {
    context.provide(Facility.config, loadSettings(context.require(Facility.dataDir), overrides));
  },
});
