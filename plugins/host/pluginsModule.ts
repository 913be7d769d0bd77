/**
 * The plugin host as a kernel module: loads the built-in and data-dir plugins and provides
 * `Facility.plugins` (the host, and the plugins as a turn sees them).
 */
import type { Clock, EventStore } from '../../events/index.ts';
import { Facility, INSPECT_FACILITY } from '../../actors/kernel/facilities.ts';
import type { KernelModule } from '../../actors/kernel/kernelModule.ts';
import { setting, type Settings } from '../../actors/modules/config.ts';
import type { SchedulerFacility } from '../../actors/modules/schedulerModule.ts';
import { randomIds } from '../../actors/clock/systemClock.ts';
import type { TurnSource } from '../../actors/turn/turnRunner.ts';
import { cliPlugin } from '../builtin/cli/index.ts';
import { filesPlugin } from '../builtin/files/index.ts';
import { timerPlugin } from '../builtin/timer/index.ts';
import { memoryToolsPlugin } from '../builtin/memory/index.ts';
import type { Memory } from '../../actors/memory/openMemory.ts';
import type { BuiltinPlugin, KernelControl } from '../sdk/builtinPlugin.ts';
import { PluginHost } from './pluginHost.ts';
import { turnSourceOf } from './turnSource.ts';
import { hubMemoryOf } from './hubMemory.ts';

export const MEMORY_NOTES_SCOPE = 'notes';

export type PluginsFacility = Readonly<{ host: PluginHost; turns: TurnSource }>;

export const BUILTIN_PLUGINS: readonly BuiltinPlugin[] = [cliPlugin, timerPlugin, filesPlugin];

export const pluginsModule = (builtins: readonly BuiltinPlugin[] = BUILTIN_PLUGINS): KernelModule => {
  let host: PluginHost | undefined;
  return {
    name: 'plugins',
    requires: [Facility.eventLog, Facility.clock, Facility.dataDir, Facility.config, Facility.scheduler, Facility.memory],
    provides: [Facility.plugins],
    async init(context) {
      const settings = context.require<Settings>(Facility.config);
      const scheduler = context.require<SchedulerFacility>(Facility.scheduler);
      const clock = context.require<Clock>(Facility.clock);
      const inspect = context.optional<ConstructorParameters<typeof PluginHost>[0]['inspect']>(INSPECT_FACILITY);
      const control: KernelControl = {
        stop: async () => void (await scheduler.stop()),
        tools: () => [...host!.hub.registry.tools.values()].map(({ name, plugin, description }) => ({ name, plugin, description })),
        plugins: () => host!.list(),
        pluginAction: (action, name) => host!.control(action, name),
      };
      const memory = context.require<Memory>(Facility.memory);
      host = new PluginHost({
        dataDir: context.require<string>(Facility.dataDir),
        store: context.require<EventStore>(Facility.eventLog),
        clock,
        ids: randomIds,
        builtins: [
          ...builtins,
          // Notes the model commits to cold context land in one shared scope until a tool call knows its conversation.
          memoryToolsPlugin(memory.service, { clock, ids: randomIds, scopeOf: () => MEMORY_NOTES_SCOPE }),
        ],
        control,
        inputs: scheduler,
        memory: hubMemoryOf(memory, clock, randomIds),
        settings: (key) => setting<unknown>(settings, key, undefined),
        log: (line) => context.log(line),
        fail: (error) => context.fail(error),
        ...(inspect ? { inspect } : {}),
      });
      await host.start();
      for (const plugin of host.list())
        context.log(
          `plugin ${plugin.name} (${plugin.kind}): ${plugin.state}${plugin.tools.length ? `, tools ${plugin.tools.join(', ')}` : ''}`,
        );
      context.provide(Facility.plugins, { host, turns: turnSourceOf(host.hub) } satisfies PluginsFacility);
    },
    async stop() {
      await host?.stop();
    },
  };
};
