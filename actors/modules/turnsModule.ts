/**
 * Runs the agent's turns inside the daemon: each task the scheduler starts becomes a turn
 * with the plugins' tools and stage handlers, asking the LLM sources of settings.json
 * (`llm.sources`, optional `llm.model`, `llm.systemPrompt`, `llm.maxRounds`). Without a source
 * the daemon still runs, and each input is answered with what to configure.
 */
import type { Clock, EventStore } from '../../events/index.ts';
import type { Memory } from '../memory/openMemory.ts';
import { turnMemoryOf } from '../memory/turnMemory.ts';
import { Facility } from '../kernel/facilities.ts';
import type { KernelModule } from '../kernel/kernelModule.ts';
import { providerFor, sourcesFromSettings } from '../llm/llmSources.ts';
import { ProviderChain } from '../llm/providerChain.ts';
import { TurnRunner, type TurnModel, type TurnSource } from '../turn/turnRunner.ts';
import { setting, type Settings } from './config.ts';
import type { SchedulerFacility } from './schedulerModule.ts';

const modelFrom = (settings: Settings): TurnModel => {
  const specs = sourcesFromSettings(settings);
  if (specs.length === 0) {
    return { missing: 'no LLM source is configured: add llm.sources to the data dir\'s settings.json (see the README), then restart homed' };
  }
  const override = setting<string | undefined>(settings, 'llm.model', undefined);
  const sources = specs.map((spec) => providerFor(spec, override));
  return { chain: new ProviderChain(sources), model: override ?? sources[0]!.model };
};

export const turnsModule = (): KernelModule => {
  let runner: TurnRunner | undefined;
  return {
    name: 'turns',
    requires: [Facility.eventLog, Facility.config, Facility.clock, Facility.scheduler, Facility.plugins, Facility.memory],
    provides: [Facility.turns],
    async init(context) {
      const settings = context.require<Settings>(Facility.config);
      const model = modelFrom(settings);
      if ('missing' in model) context.log(`turns: ${model.missing}`);
      const systemPrompt = setting<string | undefined>(settings, 'llm.systemPrompt', undefined);
      const maxRounds = setting<number | undefined>(settings, 'llm.maxRounds', undefined);
      runner = new TurnRunner({
        store: context.require<EventStore>(Facility.eventLog),
        tasks: context.require<SchedulerFacility>(Facility.scheduler),
        source: context.require<{ turns: TurnSource }>(Facility.plugins).turns,
        model,
        ...(systemPrompt ? { systemPrompt } : {}),
        ...(maxRounds ? { maxRounds } : {}),
        log: (line) => context.log(line),
        memory: turnMemoryOf(context.require<Memory>(Facility.memory)),
        clock: context.require<Clock>(Facility.clock),
      });
      await runner.start();
      context.provide(Facility.turns, runner);
    },
    async stop() {
      await runner?.stop();
    },
  };
};
