/**
 * The plugin host as a kernel module: loads the built-in and data-dir plugins and provides
 * `Facility.plugins` (the host, and the plugins as a turn sees them).
 */
import { realpathSync } from 'node:fs';
import { join } from 'node:path';
import { asOneLine } from '../../events/index.ts';
import type { HiddenPaths } from './processSandbox.ts';
import { machinePrivateFolders, privateFoldersOf, runtimeFolders } from './privateFolders.ts';
import {
  Facility,
  INSPECT_FACILITY,
  layoutMachine,
  MACHINE_WATCH_FACILITY,
  type MachineLayout,
  type Replayer,
  setting,
  sourceLabels,
  type ApprovalDesk,
  type KernelModule,
} from '../../actors/index.ts';
import { cliPlugin } from '../builtin/cli/index.ts';
import { filesPlugin } from '../builtin/files/index.ts';
import { MEMORY_ADMIN_TOOLS_SETTING, memoryToolsPlugin } from '../builtin/memory/index.ts';
import { timerPlugin } from '../builtin/timer/index.ts';
import { webuiPlugin } from '../builtin/webui/index.ts';
import type { BuiltinPlugin, KernelControl } from '../sdk/builtinPlugin.ts';
import { hubMemoryOf } from './hubMemory.ts';
import { PluginHost, PLUGINS_DIR } from './pluginHost.ts';
import { MemoryDesk } from './memoryDesk.ts';
import { SettingsDesk } from './settingsDesk.ts';
import { TimeTravelDesk } from './timeTravelDesk.ts';
import { turnPluginsOf } from './turnPlugins.ts';

export const MEMORY_NOTES_SCOPE = 'notes';

/**
 * What a subprocess plugin's process must not see: the data dir, all of it but the plugin's own
 * folder (the vault, settings, the log, the index snapshot, the built-ins' state, the cli socket
 * that speaks as the owner, other plugins, and whatever the daemon writes there later); and the
 * user's private folders (the home, /tmp…) but for what a plugin runs from.
 */
export const hiddenFromPlugins = (dataDir: string): HiddenPaths => {
  const real = realpathSync(dataDir);
  return {
    dataDir: real,
    pluginsDir: join(real, PLUGINS_DIR),
    folders: privateFoldersOf(machinePrivateFolders(), runtimeFolders()),
  };
};

export const BUILTIN_PLUGINS: readonly BuiltinPlugin[] = [cliPlugin, timerPlugin, filesPlugin, webuiPlugin];

/** `replayers`: what the web UI's verify re-delivers (none: it checks the projections only). */
export const pluginsModule = (builtins: readonly BuiltinPlugin[] = BUILTIN_PLUGINS, replayers: readonly Replayer[] = []): KernelModule => {
  let host: PluginHost | undefined;
  let timeTravel: TimeTravelDesk | undefined;
  // The turns start after the plugins (they use their tools) and hand over the approvals then.
  let approvals: ApprovalDesk | undefined;
  return {
    name: 'plugins',
    requires: [
      Facility.security,
      Facility.eventLog,
      Facility.clock,
      Facility.timers,
      Facility.ids,
      Facility.dataDir,
      Facility.config,
      Facility.scheduler,
      Facility.memory,
    ],
    provides: [Facility.plugins],
    async init(context) {
      const settings = context.require(Facility.config);
      const security = context.require(Facility.security);
      const scheduler = context.require(Facility.scheduler);
      const clock = context.require(Facility.clock);
      const ids = context.require(Facility.ids);
      const store = context.require(Facility.eventLog);
      const inspect = context.optional(INSPECT_FACILITY);
      const watch = context.optional(MACHINE_WATCH_FACILITY);
      const layouts = new Map<string, Promise<MachineLayout>>();
      const travel = new TimeTravelDesk(store, settings, replayers);
      timeTravel = travel;
      const control: KernelControl = {
        stop: async () => {
          const requested = (await scheduler.stop()).find((fact) => fact.type === 'StopRequested');
          const data = requested?.data as { runningTaskId: string | null; cancelBudget: readonly string[] } | undefined;
          // A reply waiting for a person is parked, not a task: stopping everything stops it too.
          const parked = (await approvals?.stopParked(() => true)) ?? 0;
          return { running: (data?.runningTaskId ?? null) !== null, waiting: data?.cancelBudget.length ?? 0, parked };
        },
        cancel: async (inputId) => {
          // The scheduler holds an input until it ends: one it does not hold is not journaled a cancel it would ignore.
          const held = scheduler.holds(inputId);
          if (held) {
            const facts = await scheduler.cancel(inputId);
            // The scheduler stopped its task: the turn ends with it.
            if (facts.some((fact) => fact.type === 'StopRequested')) return true;
          }
          // An approval's answer resumed the reply: it runs under the answer's task, which the stop is for.
          const resumed = approvals?.resumedTaskOf(inputId);
          if (resumed !== undefined) {
            await scheduler.cancel(resumed);
            return true;
          }
          // A reply waiting for a person, parked, holds no task to stop: it is stopped where it waits.
          const parked = (await approvals?.stopParked((input) => input === inputId)) ?? 0;
          return held || parked > 0;
        },
        models: () => sourceLabels(settings),
        tools: () => [...host!.hub.registry.tools.values()].map(({ name, plugin, description }) => ({ name, plugin, description })),
        plugins: () => host!.list(),
        pluginAction: (action, name, via) => host!.control(action, name, via),
        approvals: () => approvals?.pending() ?? [],
        answerApproval: (answer) =>
          approvals ? approvals.answer(answer) : Promise.reject(new Error('the turns have not started; try again in a moment')),
        log: {
          read: (options) => store.readAll(options as Parameters<typeof store.readAll>[0]),
          head: () => store.headSeq(),
          follow: (afterSeq, onEvents) => {
            const subscription = store.subscribe({ afterSeq, handler: (events) => onEvents(events) });
            return () => subscription.stop();
          },
        },
        machines: {
          layouts: () =>
            Promise.all(
              [...(watch?.machines() ?? new Map()).values()].map((machine) => {
                const laid = layouts.get(machine.id) ?? layoutMachine(machine);
                layouts.set(machine.id, laid);
                return laid;
              }),
            ),
          live: () => watch?.view() ?? { actors: [], events: [] },
          changes: () => watch?.changes ?? 0,
        },
        settings: new SettingsDesk(context.require(Facility.dataDir), (value) => security.scrubDeep(value)),
        timeTravel: travel,
        memory: new MemoryDesk(context.require(Facility.memory)),
      };
      const memory = context.require(Facility.memory);
      host = new PluginHost({
        dataDir: context.require(Facility.dataDir),
        store,
        clock,
        ids,
        timers: context.require(Facility.timers),
        builtins: [
          ...builtins,
          // A call from a turn acts on that turn's conversation; one from nowhere (none today) on the shared notes.
          memoryToolsPlugin(memory, {
            clock,
            ids,
            scopeOf: (call) => call.conversation ?? MEMORY_NOTES_SCOPE,
            adminTools: setting<boolean>(settings, MEMORY_ADMIN_TOOLS_SETTING, false),
          }),
        ],
        control,
        inputs: scheduler,
        memory: hubMemoryOf(memory, clock, ids),
        settings,
        scrub: (value) => security.scrubDeep(value),
        scrubCut: (text) => security.scrubCut(text),
        hiddenFromPlugins: hiddenFromPlugins(context.require(Facility.dataDir)),
        // What plugins log is theirs to write; it reaches the console with secret values as aliases, and each line one
        // line whatever a plugin put in it (a method name or a reason it sent forged lines of homed's and drove the terminal).
        log: (line) => context.log(asOneLine(security.scrub(line))),
        fail: (error) => context.fail(error),
        ...(inspect ? { inspect } : {}),
      });
      try {
        await host.start(context.stopping);
      } catch (error) {
        // Stopped while starting: what did start is stopped now, as the module's stop would have.
        if (context.stopping.aborted) {
          await host.stop();
          travel.close();
        }
        throw error;
      }
      for (const plugin of host.list())
        context.log(
          `plugin ${plugin.name} (${plugin.kind}): ${plugin.state}${plugin.tools.length ? `, tools ${plugin.tools.join(', ')}` : ''}`,
        );
      const { hub } = host;
      context.provide(Facility.plugins, {
        turns: turnPluginsOf(hub),
        deliver: ({ route, kind, text, outcome, inputId, stoppedFor, approval }) =>
          hub.deliver({
            channel: route.channel,
            target: route.target,
            kind,
            text,
            ...(outcome ? { outcome } : {}),
            ...(stoppedFor ? { stoppedFor } : {}),
            ...(approval ? { approval } : {}),
            ...(inputId ? { inputId } : {}),
          }),
        list: () => host!.list(),
        useApprovals: (desk) => {
          approvals = desk;
        },
        profileOf: (principal) => hub.profileOf(principal),
        profiles: () => hub.declaredPrincipals(),
      });
    },
    async stop() {
      await host?.stop();
      timeTravel?.close();
    },
  };
};
