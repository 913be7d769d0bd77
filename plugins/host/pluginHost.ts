/**
 * The plugin host: finds the plugins (built-ins, then `<dataDir>/plugins/*` with a
 * plugin.json), records each as `PluginLoaded`, puts each under a journaled supervisor, and
 * starts those that auto-start and are enabled. It answers `homed plugins` actions and stops
 * every plugin (and its process group) when the kernel stops.
 */
import { missingParts, probeSandbox, type HiddenPaths, type PluginSandboxMode, type SandboxSupport } from './processSandbox.ts';
import { basename, join } from 'node:path';
import { HologramError, pluginSupervisorStream, type Clock, type EventStore, type IdSource, type Timers } from '../../events/index.ts';
import { freeBytesOn, holdingsOf, type RefusedFolder, setting } from '../../actors/index.ts';
import { type BuiltinPlugin, type KernelControl, type PluginAction, type PluginSummary, refusedSummary } from '../sdk/builtinPlugin.ts';

export type { PluginAction, PluginSummary };
import type { PluginManifest } from '../sdk/manifestTypes.ts';
import { discoverPlugins } from './manifest.ts';
import { apiKeyVariables } from './pluginEnv.ts';
import { reapProcessGroups, type ProcessSource } from './reapProcessGroups.ts';
import { PluginHub, type HubMemory, type InputSink } from './pluginHub.ts';
import { builtinStarter, luaStarter, type HostEnv, type PluginStarter } from './pluginStarters.ts';
import { subprocessStarter } from './subprocessPlugin.ts';
import { SupervisedPlugin } from './supervisedPlugin.ts';
import { DiskReserve } from './diskReserve.ts';
import { DEFAULT_DISK_RESERVE_MB, DEFAULT_PLUGIN_STATE_MB, stateQuotaOf } from './stateQuota.ts';
import type { RemoteTimeouts } from './remotePlugin.ts';
import type { PluginSupervisorConfig } from '../../actors/index.ts';

export const PLUGINS_DIR = 'plugins';

export class UnknownPlugin extends HologramError {
  readonly code = 'UNKNOWN_PLUGIN';
  constructor(name: string, known: readonly string[]) {
    super(
      `there is no plugin '${name}'; the plugins are: ${known.join(', ') || '(none)'} ` +
        `(a plugin folder added or fixed since homed started is read at its next start: restart homed)`,
    );
  }
}

/** A plugin folder refused when homed started (its manifest): nothing runs to act on until homed reads it again. */
export class PluginRefusedAtStart extends HologramError {
  readonly code = 'PLUGIN_REFUSED_AT_START';
  constructor(name: string, reason: string) {
    super(
      `the plugin folder '${name}' was refused when homed started: ${reason}` +
        (/restart homed/.test(reason) ? '' : '; fix it, then restart homed'),
    );
  }
}

/** A request to disable or stop the plugin it came through: it would cut off the clients that reach homed that way. */
export class PluginCarriesRequest extends HologramError {
  readonly code = 'PLUGIN_CARRIES_REQUEST';
  constructor(action: 'disable' | 'stop' | 'reload', name: string) {
    // `homed plugins` reaches homed through the cli plugin, and the plugins view through the web UI's.
    const ways = [
      ...(name === 'webui' ? [] : ["the web UI's plugins view"]),
      ...(name === 'cli' ? [] : [`'homed plugins ${action} ${name}' from a terminal`]),
    ];
    super(
      `this request came through the ${name} plugin: to ${action} it would cut off every client that reaches homed through it` +
        `${action === 'disable' ? ' (and a disabled one stays off across restarts)' : action === 'reload' ? ' (this one before its answer)' : ''}; ` +
        `${action} it through another way in (${ways.join(', or ')}), or stop homed`,
    );
  }
}

export type PluginHostOptions = Readonly<{
  dataDir: string;
  store: EventStore;
  clock: Clock;
  ids: IdSource;
  builtins: readonly BuiltinPlugin[];
  /** Given to built-in plugins (the cli's stop button and listings). */
  control?: KernelControl;
  inputs?: InputSink;
  memory?: HubMemory;
  /** The data dir's settings (plugins read them without secrets; subprocesses never get the keys' variables). */
  settings?: Readonly<Record<string, unknown>>;
  /**
   * Every string inside a value with the vault's secret values as their aliases: what plugins
   * write enters the log through it, and a variable holding a secret is never passed to a plugin.
   */
  scrub?: <T>(value: T) => T;
  /** A text cut short at its end, scrubbed and without an end that could begin a value (scrubbed after the cut, it would keep all of one but its rest). */
  scrubCut?: (text: string) => string;
  /** The daemon's own files, hidden from subprocess plugins in their sandbox. */
  hiddenFromPlugins?: HiddenPaths;
  log: (line: string) => void;
  fail: (error: unknown) => void;
  /** Every timer the host arms (backoff, stable uptime, handshake, requests, kill grace): the kernel's, or manual ones in tests. */
  timers: Timers;
  supervisorConfig?: Partial<PluginSupervisorConfig>;
  /** Where external plugins live (default `<dataDir>/plugins`). */
  pluginsDir?: string;
  handshakeTimeoutMs?: number;
  remoteTimeouts?: RemoteTimeouts;
  inspect?: ConstructorParameters<typeof SupervisedPlugin>[0]['inspect'];
  /** The machine's processes, for reaping what a killed daemon left (the real ones by default). */
  processes?: ProcessSource;
}>;

type Entry = { manifest: PluginManifest; start: PluginStarter; supervisor: SupervisedPlugin };

/** Starts plugins in parallel; resolves when each has started or failed once. */
const startAll = (entries: readonly Entry[]): Promise<unknown> =>
  Promise.all(
    entries.map(async (e) => {
      await e.supervisor.send('START');
      await e.supervisor.until((s) => s !== 'starting');
    }),
  );

/**
 * The plugin among `names` whose name and '_' begin `name`, if one does: what starts so is that
 * plugin's to register, so a plugin named in it (a red team's 'innocent_ping') would take the
 * other's tool name and leave the real one refused.
 */
const withinNameOf = (name: string, names: ReadonlySet<string>): string | undefined =>
  [...names].find((other) => other !== name && name.startsWith(`${other}_`));

/** A reason of several lines (a manifest's problems, one a line, then what to do) as one: `a: b; c; fix…`. */
const oneLineReason = (reason: string): string =>
  reason
    .replace(/:\n\s*- /, ': ')
    .replace(/\n\s*- /g, '; ')
    .replace(/\s*\n\s*/g, '; ');

export class PluginHost {
  readonly hub: PluginHub;
  private readonly entries = new Map<string, Entry>();
  private diskReserve: DiskReserve | undefined;

  constructor(private readonly options: PluginHostOptions) {
    this.hub = new PluginHub({
      store: options.store,
      clock: options.clock,
      ids: options.ids,
      log: options.log,
      timers: options.timers,
      ...(options.inputs ? { inputs: options.inputs } : {}),
      ...(options.memory ? { memory: options.memory } : {}),
      ...(options.settings ? { settings: options.settings } : {}),
      ...(options.scrub ? { scrub: options.scrub } : {}),
    });
  }

  /** The sandbox subprocess plugins run in, asked of this machine once; said when it cannot be had. */
  private pluginSandbox(): Readonly<{ mode: PluginSandboxMode; support: SandboxSupport; hidden?: HiddenPaths }> {
    const mode = setting<PluginSandboxMode>(this.options.settings ?? {}, 'security.sandbox.plugins', 'isolate');
    const hidden = this.options.hiddenFromPlugins;
    // Probed with the folders each start gives back, when the module worked them out.
    const support = hidden?.folders ? probeSandbox(mode, hidden.folders.kept) : probeSandbox(mode);
    const missing = missingParts(support, hidden);
    if (missing.length > 0) {
      this.options.log(
        `plugins: ${missing.join('; ')}; subprocess plugins ${mode === 'require' ? 'will not start' : 'are sandboxed as far as the rest goes'} (security.sandbox.plugins)`,
      );
    }
    if (mode === 'off') {
      // Said as the other ways a plugin goes unsandboxed are: a red team's plugins rewrote their folders unseen.
      this.options.log(
        'plugins: security.sandbox.plugins is "off": subprocess plugins run without a sandbox (they see the data dir, keep the ' +
          'network and write wherever their user can, their own folders included, which your git and npm read)',
      );
    }
    if (support.kind === 'unavailable') {
      this.options.log(
        `plugins: ${support.why}; subprocess plugins ${mode === 'require' ? 'will not start' : 'run without a sandbox (they keep the network and see the data dir)'} ` +
          '(security.sandbox.plugins)',
      );
    }
    return { mode, support, ...(hidden ? { hidden } : {}) };
  }

  /**
   * Loads every plugin, then starts the ones that auto-start; resolves when each has started or
   * failed once. `stopping` aborted (a Ctrl-C while the daemon starts) stops the plugins still
   * starting, a subprocess waiting for its handshake included, and ends the start throwing its
   * reason; the caller then stops the host.
   */
  async start(stopping?: AbortSignal): Promise<void> {
    const { options } = this;
    await this.hub.restore();
    await this.reapLeftovers();
    const stateQuota = stateQuotaOf({
      megabytes: setting<number>(options.settings ?? {}, 'security.sandbox.pluginStateMb', DEFAULT_PLUGIN_STATE_MB),
      reserveMegabytes: setting<number>(options.settings ?? {}, 'security.sandbox.diskReserveMb', DEFAULT_DISK_RESERVE_MB),
    });
    this.diskReserve = new DiskReserve({
      folder: options.dataDir,
      reserveBytes: stateQuota.reserveBytes,
      timers: options.timers,
      freeBytes: freeBytesOn,
      log: options.log,
    });
    const env: HostEnv = {
      dataDir: options.dataDir,
      clock: options.clock,
      timers: options.timers,
      log: options.log,
      ids: options.ids,
      keyVariables: apiKeyVariables(setting<unknown>(options.settings ?? {}, 'llm.sources', undefined)),
      ...(options.scrub ? { holdsSecret: (value: string) => options.scrub!(value) !== value } : {}),
      scrubLine: (line, cutShort) => (cutShort ? (options.scrubCut?.(line) ?? line) : (options.scrub?.(line) ?? line)),
      sandbox: this.pluginSandbox(),
      stateQuota,
      diskReserve: this.diskReserve,
      ...(options.control ? { control: options.control } : {}),
      ...(options.handshakeTimeoutMs ? { handshakeTimeoutMs: options.handshakeTimeoutMs } : {}),
      ...(options.remoteTimeouts ? { remoteTimeouts: options.remoteTimeouts } : {}),
    };
    const found: { manifest: PluginManifest; start: PluginStarter }[] = options.builtins.map((plugin) => ({
      manifest: plugin.manifest,
      start: builtinStarter(plugin, env),
    }));
    const discovery = discoverPlugins(options.pluginsDir ?? join(options.dataDir, PLUGINS_DIR));
    const refused: RefusedFolder[] = discovery.invalid.map(({ dir, error }) => ({ folder: basename(dir), reason: error.message }));
    for (const { manifest, reason } of discovery.skipped) options.log(`plugin ${manifest.name} skipped: ${reason}`);
    const names = new Set([...found.map((f) => f.manifest.name), ...discovery.found.map((f) => f.manifest.name)]);
    for (const { dir, manifest } of discovery.found) {
      if (found.some((f) => f.manifest.name === manifest.name)) {
        refused.push({ folder: basename(dir), reason: `${dir} is named '${manifest.name}', which is a built-in plugin's name` });
        continue;
      }
      const within = withinNameOf(manifest.name, names);
      if (within !== undefined) {
        refused.push({
          folder: basename(dir),
          reason:
            `${dir} is named '${manifest.name}', which begins with the plugin '${within}''s name and '_': tool and channel names ` +
            `so are '${within}''s; rename it (e.g. '${within}-${manifest.name.slice(within.length + 1)}') and restart homed`,
        });
        continue;
      }
      found.push({ manifest, start: manifest.kind === 'lua' ? luaStarter(manifest, dir, env) : subprocessStarter(manifest, dir, env) });
    }
    // One line each on homed's output (a line break would show there as ⏎); `homed plugins` shows the reason as it is.
    for (const { reason } of refused) options.log(`plugin refused: ${oneLineReason(reason)}`);
    // Recorded, so 'homed plugins' and the web UI say why a plugin is missing long after the start scrolled away.
    await this.hub.refusedAtStart(refused);
    const boot = String(await options.store.headSeq());
    for (const { manifest, start } of found) {
      await this.hub.load(manifest);
      const enabled = this.hub.registry.plugins.get(manifest.name)?.enabled ?? true;
      const supervisor = new SupervisedPlugin({
        name: manifest.name,
        stream: pluginSupervisorStream(manifest.name, boot),
        store: options.store,
        clock: options.clock,
        hub: this.hub,
        start,
        enabled,
        config: { ...options.supervisorConfig, autoRestart: manifest.auto_restart },
        timers: options.timers,
        log: options.log,
        fail: options.fail,
        ...(options.inspect ? { inspect: options.inspect } : {}),
      });
      this.entries.set(manifest.name, { manifest, start, supervisor });
    }
    // Built-ins first: their names are taken (and reserved) before any external plugin can ask for them.
    this.hub.reserveBuiltins(options.builtins.map((b) => b.manifest.name));
    const autoStarting = [...this.entries.values()].filter(
      (e) => e.manifest.auto_start && this.hub.registry.plugins.get(e.manifest.name)?.enabled !== false,
    );
    const stopStarting = (): void => {
      for (const e of autoStarting) void e.supervisor.send('STOP');
    };
    stopping?.throwIfAborted();
    stopping?.addEventListener('abort', stopStarting, { once: true });
    try {
      await startAll(autoStarting.filter((e) => e.manifest.kind === 'builtin'));
      stopping?.throwIfAborted();
      await startAll(autoStarting.filter((e) => e.manifest.kind !== 'builtin'));
    } finally {
      stopping?.removeEventListener('abort', stopStarting);
    }
    stopping?.throwIfAborted();
  }

  /** Kills what the plugins of a daemon that was killed left running, before any plugin starts again. */
  private async reapLeftovers(): Promise<void> {
    for (const { group, killed, spared, reason } of reapProcessGroups(this.hub.openProcessGroups, this.options.processes)) {
      if (killed.length > 0 || spared > 0) {
        this.options.log(
          `plugin ${group.plugin}: process group ${group.pid} of a previous daemon: killed ${killed.length ? killed.join(', ') : 'nothing'}` +
            (spared ? `, spared ${spared} process(es) that are not provably its own` : ''),
        );
      }
      await this.hub.processGroupReaped(group, killed, spared, reason);
    }
  }

  async stop(): Promise<void> {
    this.diskReserve?.close();
    await Promise.all([...this.entries.values()].map((e) => e.supervisor.shutdown()));
    await this.hub.stop();
  }

  supervisor(name: string): SupervisedPlugin {
    const entry = this.entries.get(name);
    if (!entry) {
      const refused = this.hub.registry.refused.find((r) => r.folder === name);
      if (refused) throw new PluginRefusedAtStart(name, refused.reason);
      throw new UnknownPlugin(name, [...this.entries.keys()]);
    }
    return entry.supervisor;
  }

  /** `homed plugins enable|disable|reload|start|stop NAME`, asked through the plugin `via`. */
  async control(action: PluginAction, name: string, via: string): Promise<PluginSummary> {
    const supervisor = this.supervisor(name);
    if (name === via && (action === 'disable' || action === 'stop' || action === 'reload')) throw new PluginCarriesRequest(action, name);
    switch (action) {
      case 'enable':
        this.diskReserve?.pardon(name);
        await supervisor.send('ENABLE');
        break;
      case 'disable':
        await supervisor.send('DISABLE');
        break;
      case 'start':
        this.diskReserve?.pardon(name);
        await supervisor.send('START');
        break;
      case 'stop':
        await supervisor.send('STOP');
        break;
      case 'reload':
        if (supervisor.state !== 'stopped' && supervisor.state !== 'gaveUp') {
          await supervisor.send('STOP');
          await supervisor.until((s) => s === 'stopped');
        }
        this.diskReserve?.pardon(name);
        await supervisor.send('START');
        break;
    }
    await supervisor.until((s) => s !== 'starting' && s !== 'stopping');
    return this.list().find((p) => p.name === name)!;
  }

  list(): PluginSummary[] {
    const registry = this.hub.registry;
    const loaded = [...this.entries.values()].map(({ manifest, supervisor }) => {
      const entry = registry.plugins.get(manifest.name);
      return {
        name: manifest.name,
        kind: manifest.kind,
        version: manifest.version,
        state: supervisor.state,
        enabled: entry?.enabled ?? true,
        restarts: entry?.restarts ?? 0,
        pid: supervisor.pid ?? null,
        ...holdingsOf(registry, manifest.name),
      };
    });
    return [...loaded, ...registry.refused.map(refusedSummary)];
  }
}
