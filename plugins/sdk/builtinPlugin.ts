/**
 * A built-in plugin: runs in the kernel's process on the same `PluginApi` a subprocess plugin
 * gets over the wire, plus the few process-local things it needs to do I/O well.
 */
import type { Clock } from '../../events/index.ts';
import type { PluginManifest } from './manifestTypes.ts';
import type { PluginApi } from './pluginApi.ts';

/** Timers a plugin arms; tests pass manual ones so nothing waits on the wall clock. */
export type PluginTimers = Readonly<{
  setTimer: (fire: () => void, ms: number) => unknown;
  clearTimer: (handle: unknown) => void;
}>;

export type BuiltinEnv = Readonly<{
  /** The daemon's data dir (absolute). A plugin keeps its files under `<dataDir>/plugins/<name>/`. */
  dataDir: string;
  clock: Clock;
  timers: PluginTimers;
}>;

export type RunningPlugin = Readonly<{ stop(): Promise<void> }>;

export type BuiltinPlugin = Readonly<{
  manifest: PluginManifest;
  start(api: PluginApi, env: BuiltinEnv): Promise<RunningPlugin>;
}>;
