/**
 * The plugin registry as a pure fold over plugin events: which plugins exist and in what
 * state, and the tools, stage handlers, output channels and subscriptions each one holds
 * now. The host folds events as it appends them; `homed plugins` folds the log.
 */
import { PLUGIN_EVENT_TYPES, type AnyEvent, type PluginEvent, type ToolAccess } from '../../events/index.ts';

export type PluginState = 'loaded' | 'starting' | 'running' | 'crashed' | 'backoff' | 'gaveUp' | 'stopped';

export type PluginEntry = Readonly<{
  name: string;
  version: string;
  kind: string;
  capabilities: readonly string[];
  state: PluginState;
  enabled: boolean;
  /**
   * Restarts after a crash since the plugin was last started fresh (`PluginStarting` attempt 0:
   * a person's start, enable or reload, or the daemon's boot), which is when the supervisor
   * forgets its crash window too.
   */
  restarts: number;
  /** Crashes ever recorded. */
  crashes: number;
  lastError: string | null;
  /** Why its stage handlers were detached, until it is started afresh; null when they were not. */
  stagesDetached: string | null;
  /** Why its tools were detached, the same way. */
  toolsDetached: string | null;
}>;

export type ToolEntry = Readonly<{
  name: string;
  plugin: string;
  description: string;
  parameters: Readonly<Record<string, unknown>>;
  access?: ToolAccess;
}>;
/** A stage handler as registered (the stage pipeline's HandlerRef, plus its stage name). */
export type HandlerEntry = Readonly<{ id: string; plugin: string; scope: 'global' | 'own_tools'; stage: string }>;
export type ChannelEntry = Readonly<{ name: string; owner: string; capabilities: number; metaDoc: string }>;

export type PluginRegistry = Readonly<{
  plugins: ReadonlyMap<string, PluginEntry>;
  tools: ReadonlyMap<string, ToolEntry>;
  /** In registration order: the order in which their changes merge. */
  handlers: readonly HandlerEntry[];
  channels: ReadonlyMap<string, ChannelEntry>;
  subscriptions: ReadonlyMap<string, readonly string[]>;
  /** The plugin folders the last start refused to load, and why. */
  refused: readonly RefusedFolder[];
}>;

export type RefusedFolder = Readonly<{ folder: string; reason: string }>;

export const emptyPluginRegistry = (): PluginRegistry => ({
  plugins: new Map(),
  tools: new Map(),
  handlers: [],
  channels: new Map(),
  subscriptions: new Map(),
  refused: [],
});

const isPluginEvent = (event: AnyEvent): event is PluginEvent => (PLUGIN_EVENT_TYPES as readonly string[]).includes(event.type);

const STATE_OF: Readonly<Partial<Record<PluginEvent['type'], PluginState>>> = {
  PluginStarting: 'starting',
  PluginStarted: 'running',
  PluginCrashed: 'crashed',
  PluginRestarting: 'backoff',
  PluginGaveUp: 'gaveUp',
  PluginStopped: 'stopped',
};

const withPlugin = (registry: PluginRegistry, name: string, change: (entry: PluginEntry) => PluginEntry): PluginRegistry => {
  const entry = registry.plugins.get(name) ?? {
    name,
    version: '',
    kind: 'subprocess',
    capabilities: [],
    state: 'loaded' as const,
    enabled: true,
    restarts: 0,
    crashes: 0,
    lastError: null,
    stagesDetached: null,
    toolsDetached: null,
  };
  return { ...registry, plugins: new Map(registry.plugins).set(name, change(entry)) };
};

const without = <V>(map: ReadonlyMap<string, V>, keep: (value: V) => boolean): Map<string, V> =>
  new Map([...map].filter(([, value]) => keep(value)));

/** Applies one event; events of other subsystems leave the registry as it is. */
export const foldPluginRegistry = (registry: PluginRegistry, any: AnyEvent): PluginRegistry => {
  if (!isPluginEvent(any)) return registry;
  if (any.type === 'PluginsRefused') return { ...registry, refused: any.data.refused };
  const event = any;
  const name = event.data.plugin;
  const state = STATE_OF[event.type];
  if (state) {
    return withPlugin(registry, name, (entry) => ({
      ...entry,
      state,
      restarts: restartsAfter(entry.restarts, event),
      stagesDetached: isFreshStart(event) ? null : entry.stagesDetached,
      toolsDetached: isFreshStart(event) ? null : entry.toolsDetached,
      crashes: entry.crashes + (event.type === 'PluginCrashed' ? 1 : 0),
      lastError:
        event.type === 'PluginCrashed'
          ? crashReason(event.data)
          : event.type === 'PluginStopped' && event.data.error !== undefined
            ? event.data.error
            : entry.lastError,
    }));
  }
  switch (event.type) {
    case 'PluginLoaded': {
      const { version, kind, capabilities } = event.data;
      return withPlugin(registry, name, (entry) => ({
        ...entry,
        version,
        kind,
        capabilities,
        state: entry.state === 'loaded' || entry.state === 'stopped' ? 'loaded' : entry.state,
      }));
    }
    case 'PluginEnabled':
    case 'PluginDisabled':
      return withPlugin(registry, name, (entry) => ({ ...entry, enabled: event.type === 'PluginEnabled' }));
    case 'PluginToolRegistered': {
      const { description, parameters, access } = event.data;
      return {
        ...registry,
        tools: new Map(registry.tools).set(event.data.name, {
          name: event.data.name,
          plugin: name,
          description,
          parameters,
          ...(access ? { access } : {}),
        }),
      };
    }
    case 'PluginStageRegistered': {
      const { handlerId, scope, stage } = event.data;
      return { ...registry, handlers: [...registry.handlers, { id: handlerId, plugin: name, scope, stage }] };
    }
    case 'PluginStagesDetached': {
      const gone = new Set(event.data.handlers);
      const detached = withPlugin(registry, name, (entry) => ({ ...entry, stagesDetached: event.data.reason }));
      return { ...detached, handlers: registry.handlers.filter((h) => !gone.has(h.id)) };
    }
    case 'PluginToolsDetached': {
      const gone = new Set(event.data.tools);
      const detached = withPlugin(registry, name, (entry) => ({ ...entry, toolsDetached: event.data.reason }));
      return { ...detached, tools: without(registry.tools, (t) => !(t.plugin === name && gone.has(t.name))) };
    }
    case 'PluginChannelRegistered': {
      const { capabilities, metaDoc } = event.data;
      return {
        ...registry,
        channels: new Map(registry.channels).set(event.data.name, { name: event.data.name, owner: name, capabilities, metaDoc }),
      };
    }
    case 'PluginSubscribed': {
      const before = registry.subscriptions.get(name) ?? [];
      const types = [...new Set([...before, ...event.data.types])];
      return { ...registry, subscriptions: new Map(registry.subscriptions).set(name, types) };
    }
    case 'PluginRegistrationsDetached': {
      const subscriptions = new Map(registry.subscriptions);
      subscriptions.delete(name);
      return {
        ...registry,
        tools: without(registry.tools, (t) => t.plugin !== name),
        handlers: registry.handlers.filter((h) => h.plugin !== name),
        channels: without(registry.channels, (c) => c.owner !== name),
        subscriptions,
      };
    }
    default:
      return registry;
  }
};

/** A person's start, enable or reload, or the daemon's boot: not a restart after a crash. */
export const isFreshStart = (event: Readonly<{ type: string; data: unknown }>): boolean =>
  event.type === 'PluginStarting' && (event.data as { attempt?: unknown }).attempt === 0;

const restartsAfter = (restarts: number, event: PluginEvent): number => {
  if (event.type === 'PluginRestarting') return restarts + 1;
  return isFreshStart(event) ? 0 : restarts;
};

/** Why a plugin crashed, as a person reads it: the error the kernel saw, else how its process ended. */
export const crashReason = (crash: Extract<PluginEvent, { type: 'PluginCrashed' }>['data']): string =>
  crash.error ?? `exited with ${crash.signal ? `signal ${crash.signal}` : codeReason(crash.exitCode)}`;

/** Linux's signals 1-15 by number: a sandboxed plugin ended by one exits with 128 + it, as a shell reports it. */
const SIGNALS = ['HUP', 'INT', 'QUIT', 'ILL', 'TRAP', 'ABRT', 'BUS', 'FPE', 'KILL', 'USR1', 'SEGV', 'USR2', 'PIPE', 'ALRM', 'TERM'];

const codeReason = (code: number | null | undefined): string => {
  const signal = typeof code === 'number' ? SIGNALS[code - 129] : undefined;
  return signal === undefined
    ? `code ${String(code)}`
    : `code ${code} (128 + SIG${signal}: as its sandbox reports a plugin that signal ended)`;
};

/** What a plugin holds now, as `PluginRegistrationsDetached` lists it. */
export const registrationsOf = (registry: PluginRegistry, plugin: string) => ({
  tools: [...registry.tools.values()].filter((t) => t.plugin === plugin).map((t) => t.name),
  handlers: registry.handlers.filter((h) => h.plugin === plugin).map((h) => h.id),
  channels: [...registry.channels.values()].filter((c) => c.owner === plugin).map((c) => c.name),
});

/**
 * What a plugin holds, as a person reads it: tool names, stages (an own-tools handler marked),
 * channels, why any were detached, and, while it is not running, why it last failed.
 */
export const holdingsOf = (registry: PluginRegistry, plugin: string) => {
  const entry = registry.plugins.get(plugin);
  const { tools, channels } = registrationsOf(registry, plugin);
  return {
    tools,
    stages: registry.handlers.filter((h) => h.plugin === plugin).map((h) => `${h.stage}${h.scope === 'own_tools' ? ' (own tools)' : ''}`),
    channels,
    ...(entry?.stagesDetached ? { stagesDetached: entry.stagesDetached } : {}),
    ...(entry?.toolsDetached ? { toolsDetached: entry.toolsDetached } : {}),
    ...(entry?.lastError && entry.state !== 'running' ? { lastError: entry.lastError } : {}),
  };
};
