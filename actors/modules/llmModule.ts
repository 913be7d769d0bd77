/**
 * The `llm` facility as a kernel module: one provider chain from settings.json (keys named by
 * `apiKeySecret`, read from the vault through the security module), shared by every caller. Its refusals are journaled and restored at start, so a key refused before a restart
 * is not tried again until it changes.
 */
import { Facility } from '../kernel/facilities.ts';
import type { KernelModule } from '../kernel/kernelModule.ts';
import { keysOutsideTheVault, llmFacilityFrom } from '../llm/llmSources.ts';
import { openRefusalJournal } from '../llm/refusalJournal.ts';

/** `initCommand`: the command that sets up a source for this data dir, named when there is none. */
export const llmModule = (initCommand?: string): KernelModule => ({
  name: 'llm',
  requires: [Facility.config, Facility.eventLog, Facility.clock, Facility.security],
  provides: [Facility.llm],
  async init(context) {
    const security = context.require(Facility.security);
    const journal = await openRefusalJournal(context.require(Facility.eventLog), context.require(Facility.clock), (refusal) =>
      context.log(`llm: source '${refusal.source}' refused its key; it is skipped until its key changes`),
    );
    // Why a source was refused is the provider's words, which can quote the key: recorded with secret values as aliases.
    const refusals = { ...journal, record: (refusal: Parameters<typeof journal.record>[0]) => journal.record(security.scrubDeep(refusal)) };
    const settings = context.require(Facility.config);
    // A key from the environment or settings is scrubbed as a vault one is (a provider may echo it back).
    for (const { name, value } of keysOutsideTheVault(settings)) security.scrubAlso(name, value);
    const llm = llmFacilityFrom(settings, refusals, (name) => security.secret(name), initCommand);
    if ('missing' in llm) context.log(`llm: ${llm.missing}`);
    context.provide(Facility.llm, llm);
  },
});
