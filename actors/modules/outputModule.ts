/** The output actor as a kernel module: from its start on, what the log says the user receives goes to the channels. */
import { Facility } from '../kernel/facilities.ts';
import type { KernelModule } from '../kernel/kernelModule.ts';
import { OutputActor } from '../output/outputActor.ts';

export const outputModule = (): KernelModule => {
  let actor: OutputActor | undefined;
  return {
    name: 'output',
    requires: [Facility.eventLog, Facility.plugins],
    provides: [Facility.output],
    async init(context) {
      const plugins = context.require(Facility.plugins);
      actor = new OutputActor({
        store: context.require(Facility.eventLog),
        deliver: (delivery) => plugins.deliver(delivery),
        report: (report) => context.log(`output: ${report.type} on ${report.channel}${'error' in report ? `: ${report.error}` : ''}`),
      });
      await actor.start();
      context.provide(Facility.output, actor);
    },
    async stop() {
      await actor?.stop();
    },
  };
};
