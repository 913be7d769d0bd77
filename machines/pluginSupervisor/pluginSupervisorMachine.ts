/**
 * The supervisor of one subprocess plugin as an XState machine: starts it, restarts it after
 * a crash with backoff, gives up on the 4th crash within 5 minutes, stops it at once when its
 * start is refused for good (START_REFUSED), and stops it on request.
 * Pure: time comes in the messages (`at`) and through XState `after`; spawning and killing
 * are the named actions `spawnProcess` / `killProcess`, provided by the runtime.
 */
import { enqueueActions, setup } from 'xstate';
import { backoffDelayFor, crashesInWindow, shouldGiveUp } from './crashWindow.ts';
import {
  DEFAULT_PLUGIN_SUPERVISOR_CONFIG,
  type PluginStopReason,
  type PluginSupervisorContext,
  type PluginSupervisorFact,
  type PluginSupervisorInput,
  type PluginSupervisorMessage,
} from './supervisorTypes.ts';

/** The event XState raises when the backoff wait is over (for model-based tests). */
export const RESTART_DUE_EVENT = 'xstate.after.restartDelay.pluginSupervisor.backoff';
/** The event XState raises when the process has run for the stable uptime (for model-based tests). */
export const STABLE_UPTIME_EVENT = 'xstate.after.stableUptime.pluginSupervisor.running';

const atOf = (event: PluginSupervisorMessage | { type: string }): number | null =>
  'at' in event && typeof event.at === 'number' ? event.at : null;
const later = (context: PluginSupervisorContext, event: PluginSupervisorMessage | { type: string }) =>
  Math.max(context.now, atOf(event) ?? context.now);

export const pluginSupervisorMachine = setup({
  types: {
    context: {} as PluginSupervisorContext,
    events: {} as PluginSupervisorMessage,
    emitted: {} as PluginSupervisorFact,
    input: {} as PluginSupervisorInput,
  },
  actions: {
    /** Spawn the plugin process; the runtime answers PROCESS_READY / PROCESS_EXITED / PROCESS_CRASHED. */
    spawnProcess: () => {},
    /** Ask the plugin process to exit; the runtime answers PROCESS_EXITED. */
    killProcess: () => {},
    announceStarting: enqueueActions(({ context, enqueue }) => {
      enqueue.emit({ type: 'PluginStarting', data: { plugin: context.plugin, attempt: context.attempt, at: context.now } });
    }),
    /** A person started it: a fresh crash history. */
    startFresh: enqueueActions(({ context, event, enqueue }) => {
      enqueue.assign({ now: later(context, event), crashTimes: [], attempt: 0, restartAt: null });
    }),
    enable: enqueueActions(({ context, event, enqueue }) => {
      const now = later(context, event);
      enqueue.assign({ enabled: true, now });
      enqueue.emit({ type: 'PluginEnabled', data: { plugin: context.plugin, at: now } });
    }),
    disable: enqueueActions(({ context, event, enqueue }) => {
      const now = later(context, event);
      enqueue.assign({ enabled: false, now, stopReason: 'disabled' });
      enqueue.emit({ type: 'PluginDisabled', data: { plugin: context.plugin, at: now } });
    }),
    requestStop: enqueueActions(({ context, event, enqueue }) => {
      enqueue.assign({ now: later(context, event), stopReason: 'requested' });
    }),
    announceStopped: enqueueActions(({ context, event, enqueue }) => {
      const now = later(context, event);
      enqueue.assign({ now, runningSince: null, restartAt: null });
      enqueue.emit({ type: 'PluginStopped', data: { plugin: context.plugin, reason: context.stopReason, at: now } });
    }),
    /** A start no retry can fix: stopped at once, with what to fix; the crash history is not touched. */
    refuseStart: enqueueActions(({ context, event, enqueue }) => {
      if (event.type !== 'START_REFUSED') return;
      const now = later(context, event);
      const reason: PluginStopReason = 'refused';
      enqueue.assign({ now, stopReason: reason, runningSince: null, restartAt: null });
      enqueue.emit({ type: 'PluginStopped', data: { plugin: context.plugin, reason, error: event.error, at: now } });
    }),
    /** Auto-restart is off: the crash ends in `stopped`. */
    stopAfterCrash: enqueueActions(({ context, enqueue }) => {
      const reason: PluginStopReason = 'crashed';
      enqueue.assign({ stopReason: reason, restartAt: null });
      enqueue.emit({ type: 'PluginStopped', data: { plugin: context.plugin, reason, at: context.now } });
    }),
    markRunning: enqueueActions(({ context, event, enqueue }) => {
      const now = later(context, event);
      enqueue.assign({ now, runningSince: now });
      enqueue.emit({ type: 'PluginStarted', data: { plugin: context.plugin, at: now } });
    }),
    /** Running for the stable uptime: the crash history is forgotten (at the time that elapsed). */
    forgetCrashes: enqueueActions(({ context, enqueue }) => {
      const stableAt = (context.runningSince ?? context.now) + context.config.stableUptimeMs;
      const now = Math.max(context.now, stableAt);
      enqueue.assign({ crashTimes: [], now });
      enqueue.emit({ type: 'PluginCrashHistoryCleared', data: { plugin: context.plugin, forgotten: context.crashTimes.length, at: now } });
    }),
    recordCrash: enqueueActions(({ context, event, enqueue }) => {
      if (event.type !== 'PROCESS_EXITED' && event.type !== 'PROCESS_CRASHED') return;
      const at = event.at;
      const { crashWindowMs, stableUptimeMs } = context.config;
      const wasStable = context.runningSince !== null && at - context.runningSince >= stableUptimeMs;
      const crashTimes = [...crashesInWindow(wasStable ? [] : context.crashTimes, at, crashWindowMs), at];
      enqueue.assign({ now: later(context, event), crashTimes, runningSince: null });
      enqueue.emit({
        type: 'PluginCrashed',
        data: {
          plugin: context.plugin,
          exitCode: event.exitCode ?? null,
          signal: event.signal ?? null,
          ...(event.type === 'PROCESS_CRASHED' ? { error: event.error } : {}),
          crashCount: crashTimes.length,
          at,
        },
      });
    }),
    giveUp: enqueueActions(({ context, enqueue }) => {
      const { crashTimes } = context;
      enqueue.emit({
        type: 'PluginGaveUp',
        data: { plugin: context.plugin, crashes: crashTimes.length, firstCrashAt: crashTimes[0] ?? context.now, at: context.now },
      });
    }),
    scheduleRestart: enqueueActions(({ context, enqueue }) => {
      const attempt = context.crashTimes.length;
      const delayMs = backoffDelayFor(attempt, context.config.backoffMs);
      enqueue.assign({ attempt, restartDelayMs: delayMs, restartAt: context.now + delayMs });
      enqueue.emit({ type: 'PluginRestarting', data: { plugin: context.plugin, attempt, delayMs, at: context.now } });
    }),
    restartDue: enqueueActions(({ context, enqueue }) => {
      enqueue.assign({ now: Math.max(context.now, context.restartAt ?? context.now), restartAt: null });
    }),
  },
  guards: {
    isEnabled: ({ context }) => context.enabled,
    noAutoRestart: ({ context }) => !context.config.autoRestart || !context.enabled,
    crashLimitReached: ({ context }) => shouldGiveUp(context.crashTimes, context.config.crashWindowMs, context.config.crashLimit),
  },
  delays: {
    restartDelay: ({ context }) => context.restartDelayMs,
    stableUptime: ({ context }) => context.config.stableUptimeMs,
  },
}).createMachine({
  id: 'pluginSupervisor',
  context: ({ input }) => ({
    plugin: input.plugin,
    config: { ...DEFAULT_PLUGIN_SUPERVISOR_CONFIG, ...input.config },
    enabled: input.enabled ?? true,
    now: 0,
    crashTimes: [],
    runningSince: null,
    attempt: 0,
    restartDelayMs: 0,
    restartAt: null,
    stopReason: 'requested',
  }),
  initial: 'stopped',
  states: {
    stopped: {
      on: {
        START: { guard: 'isEnabled', target: 'starting', actions: 'startFresh' },
        ENABLE: { target: 'starting', actions: ['enable', 'startFresh'] },
        DISABLE: { guard: 'isEnabled', actions: 'disable' },
      },
    },
    starting: {
      entry: ['announceStarting', 'spawnProcess'],
      on: {
        PROCESS_READY: { target: 'running', actions: 'markRunning' },
        PROCESS_EXITED: { target: 'crashed', actions: 'recordCrash' },
        PROCESS_CRASHED: { target: 'crashed', actions: 'recordCrash' },
        START_REFUSED: { target: 'stopped', actions: 'refuseStart' },
        STOP: { target: 'stopping', actions: 'requestStop' },
        DISABLE: { target: 'stopping', actions: 'disable' },
      },
    },
    running: {
      after: { stableUptime: { actions: 'forgetCrashes' } },
      on: {
        PROCESS_EXITED: { target: 'crashed', actions: 'recordCrash' },
        PROCESS_CRASHED: { target: 'crashed', actions: 'recordCrash' },
        STOP: { target: 'stopping', actions: 'requestStop' },
        DISABLE: { target: 'stopping', actions: 'disable' },
      },
    },
    crashed: {
      always: [
        { guard: 'noAutoRestart', target: 'stopped', actions: 'stopAfterCrash' },
        { guard: 'crashLimitReached', target: 'gaveUp', actions: 'giveUp' },
        { target: 'backoff', actions: 'scheduleRestart' },
      ],
    },
    backoff: {
      after: { restartDelay: { target: 'starting', actions: 'restartDue' } },
      on: {
        STOP: { target: 'stopped', actions: ['requestStop', 'announceStopped'] },
        DISABLE: { target: 'stopped', actions: ['disable', 'announceStopped'] },
      },
    },
    gaveUp: {
      on: {
        START: { guard: 'isEnabled', target: 'starting', actions: 'startFresh' },
        ENABLE: { target: 'starting', actions: ['enable', 'startFresh'] },
        DISABLE: { guard: 'isEnabled', actions: 'disable' },
      },
    },
    stopping: {
      entry: 'killProcess',
      on: {
        PROCESS_EXITED: { target: 'stopped', actions: 'announceStopped' },
        PROCESS_CRASHED: { target: 'stopped', actions: 'announceStopped' },
        DISABLE: { guard: 'isEnabled', actions: 'disable' },
      },
    },
  },
});
