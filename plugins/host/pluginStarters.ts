/**
 * How each kind of plugin is started: a Lua script (in a fengari sandbox) or a built-in
 * (in-process); a subprocess in `subprocessPlugin.ts`. Each start gives back a running
 * instance whose `exited` resolves once, when it is gone.
 */
import type { HiddenPaths, PluginSandboxMode, SandboxSupport } from './processSandbox.ts';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { IdSource } from '../../events/index.ts';
import type { BuiltinEnv, BuiltinPlugin } from '../sdk/builtinPlugin.ts';
import type { PluginManifest } from '../sdk/manifestTypes.ts';
import { startLuaPlugin } from '../lua/luaScriptPlugin.ts';
import { attachLocalPlugin } from './localPlugin.ts';
import type { PluginHub } from './pluginHub.ts';
import type { ProcessExit } from './pluginProcess.ts';
import type { RemoteTimeouts } from './remotePlugin.ts';
import type { DiskReserve } from './diskReserve.ts';
import type { StateQuota } from './stateQuota.ts';

/** How an instance ended; `error` when the kernel ended it for a fault of the plugin's (e.g. garbage on stdout). */
export type InstanceExit = ProcessExit & Readonly<{ error?: string }>;

export type RunningInstance = Readonly<{
  /** Resolves when the plugin is gone (process exit, or stopped). */
  exited: Promise<InstanceExit>;
  /** Asks it to leave; resolves once it has. */
  stop(): Promise<void>;
  pid?: number;
}>;

/** Starts a plugin; `stopping` aborted ends a start still waiting on the plugin (its process killed), rejecting. */
export type PluginStarter = (hub: PluginHub, stopping?: AbortSignal) => Promise<RunningInstance>;

export type HostEnv = BuiltinEnv &
  Readonly<{
    log: (line: string) => void;
    /** Names each subprocess start (its instance marker). */
    ids: IdSource;
    /** Variables that hold the daemon's keys: never passed to a plugin, even when its manifest asks. */
    keyVariables: ReadonlySet<string>;
    /** Whether a value holds a vault secret: that variable is withheld too. */
    holdsSecret?: (value: string) => boolean;
    /** A line of a plugin's for homed's output, secret values as aliases; one `cutShort` loses an end that could begin one. */
    scrubLine: (line: string, cutShort: boolean) => string;
    /** The sandbox subprocess plugins run in (absent: none). */
    sandbox?: Readonly<{ mode: PluginSandboxMode; support: SandboxSupport; hidden?: HiddenPaths }>;
    /** What a subprocess plugin may keep in its state folder (absent: DEFAULT_PLUGIN_STATE_MB). */
    stateQuota?: StateQuota;
    /** The room kept on the data dir's disk, watched for every running subprocess plugin (absent: not watched). */
    diskReserve?: DiskReserve;
    handshakeTimeoutMs?: number;
    remoteTimeouts?: RemoteTimeouts;
  }>;

/** A local instance lives until it is stopped. */
const localInstance = (stopPlugin: () => Promise<void>): RunningInstance => {
  let finish!: (exit: ProcessExit) => void;
  const exited = new Promise<ProcessExit>((resolve) => (finish = resolve));
  return {
    exited,
    stop: async () => {
      try {
        await stopPlugin();
      } finally {
        finish({ exitCode: 0, signal: null });
      }
    },
  };
};

export const luaStarter =
  (manifest: PluginManifest, dir: string, env: HostEnv): PluginStarter =>
  async (hub) => {
    const script = readFileSync(join(dir, manifest.entry), 'utf8');
    const api = attachLocalPlugin(hub, manifest.name, manifest.capabilities, env.log, { external: true });
    const { memory_mb, instructions, time_ms } = manifest.limits ?? {};
    const running = await startLuaPlugin(api, {
      name: manifest.name,
      script,
      ...(memory_mb === undefined ? {} : { memoryLimitBytes: memory_mb * 1024 * 1024 }),
      ...(instructions === undefined ? {} : { instructionBudget: instructions }),
      ...(time_ms === undefined ? {} : { timeLimitMs: time_ms }),
      cutShort: (text) => env.scrubLine(text, true),
    });
    return localInstance(() => running.stop());
  };

export const builtinStarter =
  (plugin: BuiltinPlugin, env: HostEnv): PluginStarter =>
  async (hub) => {
    const { manifest } = plugin;
    const api = attachLocalPlugin(hub, manifest.name, manifest.capabilities, env.log);
    const running = await plugin.start(api, env);
    return localInstance(() => running.stop());
  };
