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
import { turnModelFrom } from '../llm/llmSources.ts';
import { TurnRunner, type TurnSource } from '../turn/turnRunner.ts';
import { setting, type Settings } from './config.ts';
import type { SchedulerFacility } from './schedulerModule.ts';

export const turnsModule = (): KernelModule => {
  let runner: TurnRunner | undefined;
  return {
    name: 'turns',
    requires: [Facility.eventLog, Facility.config, Facility.clock, Facility.scheduler, Facility.plugins, Facility.memory],
    provides: [Facility.turns],
    async init(context) {
      const settings = context.require<Settings>(Facility.config);
      const model = turnModelFrom(settings);
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
