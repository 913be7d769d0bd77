/**
 * How each kind of plugin is started: a subprocess (spawned, handshaken, served as a remote
 * actor), a Lua script (in a fengari sandbox) or a built-in (in-process). Each start gives back
 * a running instance whose `exited` resolves once, when it is gone.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { HologramError, type IdSource, type Timers } from '../../events/index.ts';
import { PluginConnection } from '../protocol/index.ts';
import type { BuiltinEnv, BuiltinPlugin } from '../sdk/builtinPlugin.ts';
import type { PluginManifest } from '../sdk/manifestTypes.ts';
import { startLuaPlugin } from '../lua/luaScriptPlugin.ts';
import { attachLocalPlugin } from './localPlugin.ts';
import type { PluginHub } from './pluginHub.ts';
import { pluginEnvironment } from './pluginEnv.ts';
import { PluginProcess, type ProcessExit } from './pluginProcess.ts';
import { DEFAULT_REMOTE_TIMEOUTS, remoteEndpoint, servePlugin, type RemoteTimeouts } from './remotePlugin.ts';

export type RunningInstance = Readonly<{
  /** Resolves when the plugin is gone (process exit, or stopped). */
  exited: Promise<ProcessExit>;
  /** Asks it to leave; resolves once it has. */
  stop(): Promise<void>;
  pid?: number;
}>;

export type PluginStarter = (hub: PluginHub) => Promise<RunningInstance>;

export class PluginHandshakeFailed extends HologramError {
  readonly code = 'PLUGIN_HANDSHAKE_FAILED';
}

export type HostEnv = BuiltinEnv &
  Readonly<{
    log: (line: string) => void;
    /** Names each subprocess start (its instance marker). */
    ids: IdSource;
    /** Variables that hold the daemon's keys: never passed to a plugin, even when its manifest asks. */
    keyVariables: ReadonlySet<string>;
    handshakeTimeoutMs?: number;
    remoteTimeouts?: RemoteTimeouts;
  }>;

const TSX_LOADER = fileURLToPath(import.meta.resolve('tsx'));

/** The command that runs a subprocess entry: node for scripts (TypeScript through tsx), the file itself otherwise. */
export const commandFor = (entryPath: string): { command: string; args: string[] } => {
  if (/\.(c|m)?ts$/i.test(entryPath)) return { command: process.execPath, args: ['--import', TSX_LOADER, entryPath] };
  if (/\.(c|m)?js$/i.test(entryPath)) return { command: process.execPath, args: [entryPath] };
  return { command: entryPath, args: [] };
};

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

const untilReady = (ready: Promise<void>, child: PluginProcess, name: string, timeoutMs: number, timers: Timers): Promise<void> =>
  new Promise<void>((resolve, reject) => {
    const timer = timers.setTimer(
      () =>
        reject(
          new PluginHandshakeFailed(
            `plugin '${name}' did not say 'ready' within ${timeoutMs} ms of its hello; its main function must return`,
          ),
        ),
      timeoutMs,
    );
    const settle = (fn: () => void) => () => {
      timers.clearTimer(timer);
      fn();
    };
    ready.then(settle(resolve));
    child.exited.then(settle(() => reject(new PluginHandshakeFailed(`plugin '${name}' exited before it said 'ready'`))));
  });

export const subprocessStarter =
  (manifest: PluginManifest, dir: string, env: HostEnv): PluginStarter =>
  async (hub) => {
    const name = manifest.name;
    const { command, args } = commandFor(join(dir, manifest.entry));
    const instance = env.ids.next();
    const environment = pluginEnvironment(manifest.env ?? [], process.env, env.keyVariables, instance);
    for (const { why } of environment.withheld) await hub.misbehaved(name, 'ENV_WITHHELD', `its manifest asks for ${why}`);
    const child = await PluginProcess.spawn({
      plugin: name,
      command,
      args,
      cwd: dir,
      env: environment.env,
      onStderr: (line) => env.log(`plugin ${name} (stderr): ${line}`),
      timers: env.timers,
    });
    const connection = new PluginConnection(child.child.stdout!, child.child.stdin!, { timers: env.timers });
    const { ready } = servePlugin(hub, name, connection, env.log);
    child.exited.then(() => connection.close('the plugin process exited'));
    const timeoutMs = env.handshakeTimeoutMs ?? 10_000;
    try {
      const hello = await connection.awaitHello({ capabilities: manifest.capabilities, timeoutMs });
      if (hello.plugin !== name) {
        throw new PluginHandshakeFailed(`plugin in ${dir} said hello as '${hello.plugin}' but its manifest names it '${name}'`);
      }
      // Attached before 'ready' so its registrations are served; running only once it says ready.
      hub.attach(name, manifest.capabilities, remoteEndpoint(connection, env.remoteTimeouts ?? DEFAULT_REMOTE_TIMEOUTS), {
        external: true,
      });
      await untilReady(ready, child, name, timeoutMs, env.timers);
    } catch (error) {
      connection.close(`handshake failed: ${(error as Error).message}`);
      child.kill('SIGKILL');
      await child.exited;
      throw error;
    }
    return {
      exited: child.exited,
      pid: child.pid,
      stop: async () => {
        connection.close('the kernel stops this plugin');
        await child.stop();
      },
    };
  };

export const luaStarter =
  (manifest: PluginManifest, dir: string, env: HostEnv): PluginStarter =>
  async (hub) => {
    const script = readFileSync(join(dir, manifest.entry), 'utf8');
    const api = attachLocalPlugin(hub, manifest.name, manifest.capabilities, env.log, { external: true });
    const { memory_mb, instructions } = manifest.limits ?? {};
    const running = await startLuaPlugin(api, {
      name: manifest.name,
      script,
      ...(memory_mb === undefined ? {} : { memoryLimitBytes: memory_mb * 1024 * 1024 }),
      ...(instructions === undefined ? {} : { instructionBudget: instructions }),
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
