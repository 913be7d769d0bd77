/** The output actor as a kernel module: from this boot's start on, what the log says the user receives goes to the channels. */
import { KERNEL_STREAM } from '../../events/index.ts';
import { Facility } from '../kernel/facilities.ts';
import type { KernelModule } from '../kernel/kernelModule.ts';
import { kernelBoots } from '../kernel/replayKernel.ts';
import { OutputActor } from '../output/outputActor.ts';

export const outputModule = (): KernelModule => {
  let actor: OutputActor | undefined;
  return {
    name: 'output',
    requires: [Facility.eventLog, Facility.plugins],
    provides: [Facility.output],
    async init(context) {
      const plugins = context.require(Facility.plugins);
      const store = context.require(Facility.eventLog);
      actor = new OutputActor({
        store,
        deliver: (delivery) => plugins.deliver(delivery),
        report: (report) => context.log(`output: ${report.type} on ${report.channel}${'error' in report ? `: ${report.error}` : ''}`),
      });
      // From this boot's first event: inputs taken while the plugins were starting keep their routes.
      const boot = kernelBoots(await store.readStream(KERNEL_STREAM)).at(-1)?.[0];
      await actor.start(boot ? boot.seq - 1 : undefined);
      context.provide(Facility.output, actor);
    },
    async stop() {
      await actor?.stop();
    },
  };
};
