/**
 * A subprocess plugin's start: spawn it with its allow-listed environment, handshake, serve it
 * as a remote actor until it says ready, and give back an instance whose `exited` resolves
 * once, when the process is gone. A connection that breaks while the process lives (stray
 * bytes on stdout, a bye) ends the process too, so nothing is left "running" that cannot
 * answer; the reason travels with the exit.
 */
import { accessSync, chmodSync, constants, lstatSync, mkdirSync } from 'node:fs';
import {
  hiddenTreesFor,
  writesOnlyOwn,
  PluginFolderOutOfPlace,
  pluginFolderNested,
  PluginSetupFileLinked,
  PluginStateFolderUnfit,
  SETUP_FILES,
  PluginSandboxUnavailable,
  sandboxedCommand,
} from './processSandbox.ts';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Timers } from '../../events/index.ts';
import { AnswersUnread, FramingLost, PluginConnection, ProtocolVersionMismatch } from '../protocol/index.ts';
import type { PluginManifest } from '../sdk/manifestTypes.ts';
import { pluginEnvironment } from './pluginEnv.ts';
import { pluginStateDir } from '../sdk/builtinPlugin.ts';
import type { PluginHub } from './pluginHub.ts';
import { PluginProcess, PluginSpawnFailed, type ProcessExit } from './pluginProcess.ts';
import { currentBootId, processInfo } from './processTable.ts';
import { reserveHolder } from './reserveHolder.ts';
import type { HostEnv, InstanceExit, PluginStarter } from './pluginStarters.ts';
import { DEFAULT_REMOTE_TIMEOUTS, remoteEndpoint, servePlugin } from './remotePlugin.ts';
import { PluginHandshakeFailed, PluginStartRefused } from './startErrors.ts';
import { stderrHint } from './stderrHints.ts';
import { realOrSelf } from './privateFolders.ts';
import { type PluginConsole, pluginConsole } from './pluginConsole.ts';
import { StderrTail } from './stderrGist.ts';
import { stderrCutNote } from './stderrLines.ts';
import {
  checkStateQuota,
  DEFAULT_PLUGIN_STATE_MB,
  PluginStateOverQuota,
  type StateQuota,
  stateQuotaOf,
  watchStateQuota,
} from './stateQuota.ts';

/**
 * The folder plugin `name` keeps what it writes in, in data dir `dataDir` beside the built-ins'
 * (`state/NAME`), made when it has none and private to the daemon's user at every start. Not in
 * the plugin's own folder: there it was what its user's git read (a plugin made it a repository
 * whose config ran its code at the user's `git status`), and a set-user-ID file it left there
 * was within others' reach.
 */
const stateFolderOf = (name: string, dataDir: string): string => {
  const state = pluginStateDir(dataDir, name);
  mkdirSync(dirname(state), { recursive: true, mode: 0o700 });
  const found = lstatSync(state, { throwIfNoEntry: false });
  if (found !== undefined && !found.isDirectory()) throw new PluginStateFolderUnfit(name, state);
  if (found === undefined) mkdirSync(state, { mode: 0o700 });
  else chmodSync(state, 0o700);
  return state;
};

/** The failures of a start that are the plugin's build or manifest, not bad luck. */
const permanent = (plugin: string, error: unknown): unknown => {
  // What the sandbox can be is asked of the machine once per daemon: its fix (a setting or the machine) needs a new start.
  if (error instanceof PluginSandboxUnavailable) return new PluginStartRefused(plugin, error.message, error, 'restart homed');
  return error instanceof ProtocolVersionMismatch ||
    error instanceof PluginSpawnFailed ||
    error instanceof PluginFolderOutOfPlace ||
    error instanceof PluginSetupFileLinked ||
    error instanceof PluginStateFolderUnfit ||
    error instanceof PluginStateOverQuota
    ? new PluginStartRefused(plugin, error.message, error)
    : error;
};

/**
 * An entry that is a program must be one this user may run: asked before it starts, because in
 * its sandbox the exec happens inside, where a failure would look like a crash, not a refusal.
 */
const checkRunnable = (plugin: string, command: string): void => {
  if (command === process.execPath) return;
  try {
    accessSync(command, constants.X_OK);
  } catch (error) {
    throw new PluginSpawnFailed(plugin, command, error);
  }
};

/** tsx's loader, found only when a TypeScript plugin is started (a daemon without one never looks). */
const tsxLoader = (): string => fileURLToPath(import.meta.resolve('tsx'));

/** The command that runs a subprocess entry: node for scripts (TypeScript through tsx), the file itself otherwise. */
export const commandFor = (entryPath: string): { command: string; args: string[] } => {
  if (/\.(c|m)?ts$/i.test(entryPath)) return { command: process.execPath, args: ['--import', tsxLoader(), entryPath] };
  if (/\.(c|m)?js$/i.test(entryPath)) return { command: process.execPath, args: [entryPath] };
  return { command: entryPath, args: [] };
};

/** Resolves on `ready`; rejects when the deadline passes or the plugin is gone first (with why). */
const untilReady = (ready: Promise<void>, gone: Promise<string>, name: string, timeoutMs: number, timers: Timers): Promise<void> =>
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
    gone.then((why) => settle(() => reject(new PluginHandshakeFailed(`plugin '${name}' ${why} before it said 'ready'`)))());
  });

/**
 * Spawns the plugin with the environment it may have (withheld variables are recorded against
 * it) and records the process group it leads; `ended` resolves once the group is gone and that
 * is recorded too.
 */
const spawnPlugin = async (
  manifest: PluginManifest,
  dir: string,
  env: HostEnv,
  hub: PluginHub,
): Promise<{
  child: PluginProcess;
  ended: Promise<ProcessExit>;
  say: PluginConsole;
  state: string;
  quota: StateQuota;
  stderr: StderrTail;
}> => {
  const name = manifest.name;
  const sandbox = env.sandbox ?? { mode: 'off', support: { kind: 'off' } };
  // Its folder as it really is: what the sandbox gives back of a hidden data dir, and where it runs.
  const real = realOrSelf(dir);
  const entry = commandFor(join(real, manifest.entry));
  checkRunnable(name, entry.command);
  const linked =
    sandbox.support.kind === 'available'
      ? SETUP_FILES.map((file) => join(real, file)).find((path) => lstatSync(path, { throwIfNoEntry: false })?.isSymbolicLink())
      : undefined;
  if (linked) throw new PluginSetupFileLinked(name, linked);
  const state = stateFolderOf(name, sandbox.hidden?.dataDir ?? env.dataDir);
  const quota = env.stateQuota ?? stateQuotaOf({ megabytes: DEFAULT_PLUGIN_STATE_MB });
  const charged = env.diskReserve?.chargeOf(name);
  if (charged !== undefined) throw new PluginStartRefused(name, charged);
  await checkStateQuota(name, state, quota);
  const nested = sandbox.support.kind === 'available' && sandbox.hidden ? pluginFolderNested(sandbox.hidden.pluginsDir, real) : undefined;
  if (nested) {
    const where = `${nested.folder}, the folder of the plugin ${nested.entry}`;
    const why = nested.holds
      ? `which holds ${where}, whose manifest it could rewrite`
      : `which is inside ${where}, which could rewrite its manifest`;
    throw new PluginFolderOutOfPlace(name, dir, real, why);
  }
  const wants = { network: manifest.capabilities.includes('network'), home: manifest.capabilities.includes('home') };
  const { command, args } = sandboxedCommand(
    name,
    wants,
    sandbox.mode,
    sandbox.support,
    sandbox.hidden,
    { path: dir, real, state },
    entry,
    {
      fileBytes: quota.bytes,
    },
  );
  const hiddenTrees = hiddenTreesFor(wants, sandbox.support, sandbox.hidden);
  const readOnly = writesOnlyOwn(sandbox.support);
  let hinted = false;
  const instance = env.ids.next();
  const environment = pluginEnvironment(manifest.env ?? [], process.env, env.keyVariables, instance, env.holdsSecret, state);
  for (const { why } of environment.withheld) await hub.misbehaved(name, 'ENV_WITHHELD', `its manifest asks for ${why}`);
  // Its log lines and its stderr share one budget on homed's output.
  const say = pluginConsole(name, env.log, env.clock, env.scrubLine);
  const stderr = new StderrTail();
  const child = await PluginProcess.spawn({
    plugin: name,
    command,
    args,
    cwd: real,
    env: environment.env,
    onStderr: (line, cutShort) => {
      say(' (stderr)', line, cutShort ? stderrCutNote() : undefined);
      // Kept and read scrubbed: it may quote part of a path, or a value.
      const scrubbed = env.scrubLine(line, cutShort);
      stderr.push(scrubbed);
      // One hint a start: a plugin printing the same failure in a loop gets no more.
      const hint = hinted ? undefined : stderrHint(name, dir, scrubbed, hiddenTrees, readOnly ? state : undefined);
      if (hint) env.log(hint);
      hinted ||= hint !== undefined;
    },
    timers: env.timers,
  });
  const recorded = hub
    .processSpawned({
      plugin: name,
      pid: child.pid,
      startTicks: processInfo(child.pid)?.startTicks ?? null,
      bootId: currentBootId(),
      instance,
    })
    .catch((error: unknown) => env.log(`plugin ${name}: could not record its process group ${child.pid}: ${(error as Error).message}`));
  const ended = child.exited.then(async (exit) => {
    await recorded;
    await hub
      .processGroupEnded(name, child.pid)
      .catch((error: unknown) => env.log(`plugin ${name}: could not record the end of its process group: ${(error as Error).message}`));
    return exit;
  });
  await recorded;
  return { child, ended, say, state, quota, stderr };
};

export const subprocessStarter =
  (manifest: PluginManifest, dir: string, env: HostEnv): PluginStarter =>
  async (hub, stopping) => {
    const name = manifest.name;
    const { child, ended, say, state, quota, stderr } = await spawnPlugin(manifest, dir, env, hub).catch((error: unknown) => {
      throw permanent(name, error);
    });
    const connection = new PluginConnection(child.child.stdout!, child.child.stdin!, { timers: env.timers });
    const { ready } = servePlugin(hub, name, connection, say);
    let stopped = false;
    /** Why the kernel ended the process, when it did for a fault of the plugin's. */
    let fault: string | undefined;
    /** Why the disk's reserve ended it, told once its processes are gone and what that freed is known. */
    let reserveFault: Promise<string> | undefined;
    const faultNow = async (): Promise<string | undefined> => {
      if (reserveFault) fault ??= await reserveFault;
      return fault;
    };
    /** Why the connection closed on the plugin for a fault it cannot recover from, when it did. */
    let broke: string | undefined;
    // Over its quota from its spawn on (it may write before it greets), it is stopped, and its next start is refused
    // until its folder holds less.
    const watch = watchStateQuota(realOrSelf(state), quota, child.pid, env.timers, (why) => {
      fault ??= `${why}, so homed stopped it`;
      child.kill('SIGKILL');
    });
    const held = env.diskReserve?.hold(
      reserveHolder(name, child, realOrSelf(state), quota, env.timers, (why) => {
        reserveFault ??= why;
      }),
    );
    void ended.then(() => {
      watch.stop();
      held?.release();
    });
    connection.on('protocolError', (error) => {
      if (error instanceof FramingLost) broke = 'it wrote bytes to stdout that are not frames';
      if (error instanceof AnswersUnread) broke = "it sent requests and left the kernel's answers unread";
    });
    connection.on('bye', (reason) => (fault ??= `it said bye (${reason || 'no reason'})`));
    connection.on('close', (reason) => {
      if (stopped || !child.running) return;
      if (broke) {
        fault = `${broke}, so the kernel stopped it (${reason})`;
        child.kill('SIGKILL');
      } else void child.stop();
    });
    child.exited.then(() => connection.close('the plugin process exited'));
    const gone = ended.then(async () => (await faultNow()) ?? 'exited');
    const timeoutMs = env.handshakeTimeoutMs ?? 10_000;
    // Stopped while it greets: the process is ended now rather than at the handshake's timeout.
    const cut = (): void => child.kill('SIGKILL');
    if (stopping?.aborted) cut();
    stopping?.addEventListener('abort', cut, { once: true });
    try {
      const hello = await connection.awaitHello({ capabilities: manifest.capabilities, timeoutMs });
      if (hello.plugin !== name) {
        throw new PluginStartRefused(
          name,
          `the plugin in ${dir} said hello as '${hello.plugin}', but its manifest names it '${name}'; make the two names the same`,
        );
      }
      // Attached before 'ready' so its registrations are served; running only once it says ready.
      hub.attach(name, manifest.capabilities, remoteEndpoint(connection, env.remoteTimeouts ?? DEFAULT_REMOTE_TIMEOUTS), {
        external: true,
      });
      await untilReady(ready, gone, name, timeoutMs, env.timers);
    } catch (error) {
      stopped = true;
      connection.close(`handshake failed: ${(error as Error).message}`);
      child.kill('SIGKILL');
      await ended;
      // Ended by the kernel for a fault of its own (over its quota while it started), that is why, not the closed connection;
      // else what its stderr said last (a syntax error, a package not found), which the closed connection is not.
      const ownFault = await faultNow();
      if (ownFault !== undefined) throw permanent(name, new PluginHandshakeFailed(`plugin '${name}': ${ownFault} before it said 'ready'`));
      const settled = permanent(name, error);
      const said = stderr.gist();
      if (said === undefined || settled instanceof PluginStartRefused || !(settled instanceof Error)) throw settled;
      const told = `${settled.message}; its stderr said: ${said}`;
      throw stderr.cannotLoad() ? new PluginStartRefused(name, told, settled) : new PluginHandshakeFailed(told, { cause: settled });
    } finally {
      stopping?.removeEventListener('abort', cut);
    }
    return {
      exited: ended.then(async (exit): Promise<InstanceExit> => {
        const ownFault = await faultNow();
        return ownFault ? { ...exit, error: `plugin '${name}': ${ownFault}` } : exit;
      }),
      pid: child.pid,
      stop: async () => {
        stopped = true;
        connection.close('the kernel stops this plugin');
        await child.stop();
        await ended;
      },
    };
  };
