/** The `llm` facility as a kernel module: one provider chain from settings.json, shared by every caller. */
import { Facility } from '../kernel/facilities.ts';
import type { KernelModule } from '../kernel/kernelModule.ts';
import { llmFacilityFrom } from '../llm/llmSources.ts';

export const llmModule = (): KernelModule => ({
  name: 'llm',
  requires: [Facility.config],
  provides: [Facility.llm],
  init(context) {
    const llm = llmFacilityFrom(context.require(Facility.config));
    if ('missing' in llm) context.log(`llm: ${llm.missing}`);
    context.provide(Facility.llm, llm);
  },
});
