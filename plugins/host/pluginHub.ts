/**
 * The kernel's side of every plugin. What a plugin asks (register a tool, a stage handler, an
 * output channel, subscribe, inject an input) is checked against its granted capabilities,
 * appended to the `plugins` stream, and only then folded into the live registry; when a plugin
 * goes, its registrations leave as one `PluginRegistrationsDetached` event. The hub also knows
 * how to reach each plugin (its endpoint) to call a tool, run a stage handler or deliver output.
 */
import {
  closestNames,
  createDefaultCatalog,
  HologramError,
  PLUGIN_EVENT_TYPES,
  PLUGIN_REGISTRY_STREAM,
  type Clock,
  type EventNamed,
  type EventStore,
  type IdSource,
  type NewHologramEvent,
  type RecordedEvent,
  type Subscription,
  type Timers,
} from '../../events/index.ts';
import { DEFAULT_STAGE_TIMEOUT_MS, STAGES, TOOL_STAGES, type StageChange, type StageContext, type StageName } from '../../actors/index.ts';
import { Capability, INTERNAL, isOwnerOrInternal, nestsDeeperThan, OWNER, type CapabilityName } from '../../actors/index.ts';
import {
  emptyPluginRegistry,
  foldPluginRegistry,
  isFreshStart,
  registrationsOf,
  type PluginRegistry,
  type RefusedFolder,
} from '../../actors/index.ts';
import { emptyProcessGroups, foldProcessGroups, type OpenGroup, type ProcessGroups } from '../../actors/index.ts';
import type { MisbehaviourConfig } from '../../actors/index.ts';
import type { PluginManifest, PluginProfiles } from '../sdk/manifestTypes.ts';
import type {
  ChannelDelivery,
  ChannelSpec,
  InjectedInput,
  InjectedReceipt,
  KnowledgeRelation,
  MemoryItem,
  PluginEvent,
  StageSpec,
  ToolCallInfo,
  ToolReply,
  ToolSpec,
  Triple,
} from '../sdk/pluginApi.ts';
import { CAPABILITY_WITHHELD, MAX_PLUGIN_LEVEL, type PluginCapability } from '../sdk/wireMethods.ts';
import { DEFAULT_INJECTION_BOUNDS, heldBy, type HeldInputs, type InjectionBounds } from './injectionBounds.ts';
import { InjectionGate } from './injectionGate.ts';
import { MisbehaviourWindows } from './misbehaviourWindows.ts';
import { ConnectionClosed, RequestTimedOut } from '../protocol/errors.ts';
import { CallBudgets, type ChargedKind, stageCallCost, TOOL_LONG_WAIT_MS, TOOL_TIMEOUTS_BUDGET } from './callCharges.ts';
import { StageChangeTooLarge, stageChangeTooLarge } from './stageChangeSize.ts';
import { pluginSetting } from './pluginSettings.ts';
import { nameConflict, type NameKind } from './reservedNames.ts';
import { toolParametersProblem } from './toolParameters.ts';

/** How the kernel reaches one attached plugin. */
export type PluginEndpoint = Readonly<{
  callTool(name: string, args: Readonly<Record<string, unknown>>, call: ToolCallInfo): Promise<ToolReply>;
  runStage(handlerId: string, stage: StageName, context: StageContext): Promise<StageChange | null | undefined>;
  deliver(delivery: ChannelDelivery): Promise<void>;
  event(event: PluginEvent): void;
}>;

/** Where injected inputs go (the scheduler facility has this shape). */
export type InputSink = Readonly<{
  submit(input: {
    id: string;
    source: string;
    origin: 'plugin' | 'user';
    kind: 'queued' | 'interrupt';
    level?: number;
    payload: Readonly<{
      text: string;
      replyChannel: string | null;
      replyTarget: string | null;
      conversation: string | null;
      principal: string;
    }>;
  }): Promise<unknown>;
  /** What the scheduler holds now: each plugin's inputs in it count against its bound. */
  state(): HeldInputs;
}>;

/** The most characters of an address a subprocess plugin's input names (its reply target, its conversation). */
export const ADDRESS_AT_MOST = 256;
/** Controls, formatting characters (zero-width, direction overrides) and line or paragraph separators. */
const NOT_PRINTABLE = /[\p{Cc}\p{Cf}\u2028\u2029]/u;

/** The most characters a subprocess plugin's input may hold (as a message typed in the web UI). */
export const MAX_INJECTED_TEXT = 256 * 1024;

export class CapabilityWithheld extends HologramError {
  readonly code = CAPABILITY_WITHHELD;
  constructor(plugin: string, capability: string, granted: readonly string[]) {
    super(
      `plugin '${plugin}' called a method of capability '${capability}', which it was not granted ` +
        `(granted: ${granted.join(', ') || 'none'}); add "${capability}" to "capabilities" in its plugin.json`,
    );
  }
}

export class RegistrationRefused extends HologramError {
  readonly code = 'REGISTRATION_REFUSED';
}

/** A call of a stage handler the hub has just detached (its plugin held turns up): nothing waits on it. */
export class PluginCallsDetached extends HologramError {
  readonly code = 'PLUGIN_CALLS_DETACHED';
}

/** A registration refused because another holds the name: recorded as misbehaviour (reaching for another's name). */
class NameTaken extends RegistrationRefused {}

export class PluginUnavailable extends HologramError {
  readonly code = 'PLUGIN_UNAVAILABLE';
  constructor(plugin: string, what: string) {
    super(`plugin '${plugin}' is not running, so ${what} cannot be reached; see 'homed plugins' for its state`);
  }
}

/** The memory as plugins reach it (the memory module provides it). */
export type HubMemory = Readonly<{
  recall(query: string, k: number): Promise<readonly MemoryItem[]>;
  commit(plugin: string, triples: readonly Triple[], sentence: string | undefined): Promise<readonly string[]>;
  knowledge(entity: string, depth: number): readonly KnowledgeRelation[];
}>;

export type PluginHubOptions = Readonly<{
  store: EventStore;
  clock: Clock;
  ids: IdSource;
  inputs?: InputSink;
  /** The data dir's settings; plugins read them through `pluginSetting` (secrets removed). */
  settings?: Readonly<Record<string, unknown>>;
  memory?: HubMemory;
  log?: (line: string) => void;
  /** Close misbehaviour windows (without them a window closes when its plugin goes or the hub stops). */
  timers?: Timers;
  misbehaviour?: Partial<MisbehaviourConfig>;
  /** How much each external plugin may inject (built-in plugins are not bounded). */
  injectionBounds?: Partial<InjectionBounds>;
  /**
   * Every string inside a value with the vault's secret values as their aliases. What a plugin
   * wrote (a misbehaviour's bytes, a bye's reason, a tool's description) enters the log through it.
   */
  scrub?: <T>(value: T) => T;
}>;

const NAME = /^[a-zA-Z0-9_-]{1,64}$/;

const ACCESS_KINDS = ['read', 'write', 'network'] as const;

/** A tool's declared access, checked: each kind a list of argument names. */
const toolAccessOf = (plugin: string, spec: ToolSpec): ToolSpec['access'] => {
  const access = spec.access;
  if (access === undefined) return undefined;
  const bad = (why: string) => new RegistrationRefused(`plugin '${plugin}': tool '${spec.name}' access ${why}`);
  if (typeof access !== 'object' || access === null || Array.isArray(access)) throw bad('must be an object of read, write, network');
  const stray = Object.keys(access).find((k) => !(ACCESS_KINDS as readonly string[]).includes(k));
  if (stray !== undefined) throw bad(`has '${stray}', which is not one of ${ACCESS_KINDS.join(', ')}`);
  const checked: Record<string, string[]> = {};
  for (const kind of ACCESS_KINDS) {
    const names = access[kind];
    if (names === undefined) continue;
    if (!Array.isArray(names) || names.some((n) => typeof n !== 'string' || !n)) throw bad(`.${kind} must be a list of argument names`);
    checked[kind] = [...names];
  }
  return checked;
};

/** The most tools one plugin may hold: every turn offers them all to the model. */
export const TOOLS_PER_PLUGIN = 128;
/** A tool's description and parameters (as JSON) at most, and how deep its parameters may nest. */
export const TOOL_DESCRIPTION_AT_MOST = 4 * 1024;
export const TOOL_PARAMETERS_AT_MOST = 32 * 1024;
export const TOOL_PARAMETERS_DEPTH = 64;
/** The most handlers one plugin may hold on one stage: each turn calls them all. */
export const STAGE_HANDLERS_PER_STAGE = 4;
/**
 * The most output channels one plugin may hold, and a channel's description at most: each is an
 * event, and every turn offers them all (a red team's plugin registered 14,791 and made
 * `homed plugins` take 30 s; forty descriptions of 4 MiB grew the log by 164 MB).
 */
export const CHANNELS_PER_PLUGIN = 16;
export const CHANNEL_META_DOC_AT_MOST = 4 * 1024;
/** The event types there are: a subscription names some of them, each once. */
const EVENT_TYPES: readonly string[] = createDefaultCatalog().types();

/** Why a tool is too big to offer to the model on every turn, or undefined. */
const toolSizeProblem = (description: unknown, parameters: object): string | undefined => {
  if (String(description ?? '').length > TOOL_DESCRIPTION_AT_MOST) {
    return `has a description over ${TOOL_DESCRIPTION_AT_MOST} characters; say what it does in fewer`;
  }
  if (nestsDeeperThan(parameters, TOOL_PARAMETERS_DEPTH)) return `has parameters nested deeper than ${TOOL_PARAMETERS_DEPTH} levels`;
  if (JSON.stringify(parameters).length > TOOL_PARAMETERS_AT_MOST)
    return `has parameters over ${TOOL_PARAMETERS_AT_MOST} characters as JSON`;
  return undefined;
};

export class PluginHub {
  private state: PluginRegistry = emptyPluginRegistry();
  private groups: ProcessGroups = emptyProcessGroups();
  private readonly endpoints = new Map<string, PluginEndpoint>();
  private readonly granted = new Map<string, readonly PluginCapability[]>();
  private readonly external = new Set<string>();
  /** Each loaded plugin's manifest profiles: the principals its inputs may speak as. */
  private readonly profiles = new Map<string, PluginProfiles>();
  private readonly builtins = new Set<string>();
  /** Exact names the built-in plugins registered this boot: theirs even while they hold nothing. */
  private readonly builtinNames = new Map<string, string>();
  /** The plugins loaded this boot: each one's name and `NAME_…` are its own. */
  private readonly loaded = new Set<string>();
  private subscription: Subscription | undefined;
  private tail: Promise<unknown> = Promise.resolve();
  private handlerCount = 0;
  private readonly windows: MisbehaviourWindows;
  private readonly injections: InjectionGate;
  /** What each plugin's calls cost the person; a plugin over budget is not called again while its detach is appended. */
  private readonly budgets = new CallBudgets();

  constructor(private readonly options: PluginHubOptions) {
    this.windows = new MisbehaviourWindows(options.timers, (plugin) => void this.closeWindow(plugin), options.misbehaviour);
    const bounds = { ...DEFAULT_INJECTION_BOUNDS, ...options.injectionBounds };
    this.injections = new InjectionGate(bounds, (plugin) => (options.inputs ? heldBy(options.inputs.state(), plugin) : 0));
  }

  get registry(): PluginRegistry {
    return this.state;
  }

  /** Rebuilds the registry from the log (plugin states, enabled flags; registrations of a previous boot were detached). */
  async restore(): Promise<void> {
    for (const event of await this.options.store.readAll({ types: PLUGIN_EVENT_TYPES })) {
      this.state = foldPluginRegistry(this.state, event);
      this.groups = foldProcessGroups(this.groups, event);
      if (event.type === 'PluginStageRegistered') this.handlerCount++;
    }
    // A previous process that was killed could not detach what its plugins held.
    const holders = new Set([
      ...[...this.state.tools.values()].map((t) => t.plugin),
      ...this.state.handlers.map((h) => h.plugin),
      ...[...this.state.channels.values()].map((c) => c.owner),
      ...this.state.subscriptions.keys(),
    ]);
    for (const plugin of holders) await this.detach(plugin, 'the kernel restarted');
    const lastSeq = await this.options.store.headSeq();
    this.subscription = this.options.store.subscribe({ afterSeq: lastSeq, handler: (events) => this.publish(events) });
  }

  async stop(): Promise<void> {
    await this.subscription?.stop();
    await Promise.all(this.windows.plugins.map((plugin) => this.closeWindow(plugin)));
    await this.tail;
  }

  /**
   * Reserves the built-in plugins' names before any external plugin starts: `NAME`, `NAME_…`
   * and (as they register them) their exact tool and channel names.
   */
  reserveBuiltins(names: readonly string[]): void {
    for (const name of names) this.builtins.add(name);
  }

  /** Records the folders this start refused to load (nothing when there are none now and none were before). */
  refusedAtStart(refused: readonly RefusedFolder[]): Promise<void> {
    return this.appendDecided(() =>
      refused.length === 0 && this.state.refused.length === 0 ? null : { type: 'PluginsRefused', data: { refused: [...refused] } },
    );
  }

  /** Records a loaded manifest. */
  load(manifest: PluginManifest): Promise<void> {
    this.profiles.set(manifest.name, manifest.profiles ?? {});
    this.loaded.add(manifest.name);
    return this.append({
      type: 'PluginLoaded',
      data: {
        plugin: manifest.name,
        version: manifest.version,
        kind: manifest.kind,
        entry: manifest.entry,
        capabilities: [...manifest.capabilities],
        autoStart: manifest.auto_start,
        autoRestart: manifest.auto_restart,
      },
    });
  }

  /** Applies a supervisor fact to the registry (the supervisor appended it to its own stream). */
  observe(event: Readonly<{ type: string; data: unknown }>): void {
    if (isFreshStart(event)) this.budgets.freshStart((event.data as { plugin: string }).plugin);
    this.state = foldPluginRegistry(this.state, event);
  }

  /** `external`: a subprocess or Lua plugin, which gets the narrowed surface (a read-only memory). */
  attach(plugin: string, capabilities: readonly PluginCapability[], endpoint: PluginEndpoint, options: { external?: boolean } = {}): void {
    this.endpoints.set(plugin, endpoint);
    this.granted.set(plugin, capabilities);
    if (options.external) this.external.add(plugin);
    else this.external.delete(plugin);
  }

  /** The plugin is gone: it is unreachable and its registrations leave (one event, if it held any). */
  async detach(plugin: string, reason: string): Promise<void> {
    this.endpoints.delete(plugin);
    this.granted.delete(plugin);
    this.external.delete(plugin);
    await this.closeWindow(plugin);
    // Decided in the append queue, so a registration still being appended is detached too.
    await this.appendDecided(() => {
      const held = registrationsOf(this.state, plugin);
      const subscribed = this.state.subscriptions.has(plugin);
      if (held.tools.length + held.handlers.length + held.channels.length === 0 && !subscribed) return null;
      return { type: 'PluginRegistrationsDetached', data: { plugin, reason, ...held } };
    });
  }

  // ── plugin process groups (so a daemon that was killed leaves nothing running past its next start) ──

  /** Process groups the log holds open: spawned, never seen to end. */
  get openProcessGroups(): readonly OpenGroup[] {
    return [...this.groups.values()];
  }

  /** Records the process group a subprocess plugin leads, before it is trusted with anything. */
  processSpawned(group: OpenGroup): Promise<void> {
    return this.append({ type: 'PluginProcessSpawned', data: { ...group } });
  }

  /** Records that the group's leader exited and the whole group was killed. */
  processGroupEnded(plugin: string, pid: number): Promise<void> {
    return this.append({ type: 'PluginProcessGroupEnded', data: { plugin, pid } });
  }

  /** Records what was done at start to a group a previous daemon left open. */
  processGroupReaped(group: OpenGroup, killed: readonly number[], spared: number, reason: string): Promise<void> {
    return this.append({
      type: 'PluginProcessGroupReaped',
      data: { plugin: group.plugin, pid: group.pid, killed: [...killed], spared, reason },
    });
  }

  isAttached(plugin: string): boolean {
    return this.endpoints.has(plugin);
  }

  /**
   * Records a complaint about a plugin: the first few of a window in full, the rest counted
   * and summarised in one event when the window closes, so a flood of garbage costs a bounded
   * number of events and log lines. `once`: this code is recorded at most once a window.
   */
  misbehaved(plugin: string, code: string, message: string, options: { once?: boolean } = {}): Promise<void> {
    const { record, last } = this.windows.note(plugin, code, this.options.clock.now(), options);
    if (!record) return Promise.resolve();
    const more = last
      ? ` (more from this plugin in the next ${this.windows.config.windowMs / 1_000} s are counted, not recorded one by one)`
      : '';
    this.options.log?.(`plugin ${plugin}: ${code}: ${message}${more}`);
    return this.append({ type: 'PluginMisbehaved', data: { plugin, code, message: `${message.slice(0, 4_000)}${more}` } });
  }

  /** Ends the plugin's misbehaviour window: one summary of what was only counted. */
  private closeWindow(plugin: string): Promise<void> {
    const summary = this.windows.close(plugin);
    if (!summary) return Promise.resolve();
    const codes = Object.entries(summary.byCode).map(([code, n]) => `${n} ${code}`);
    this.options.log?.(`plugin ${plugin}: misbehaved ${summary.suppressed} more times (${codes.join(', ')})`);
    return this.append({ type: 'PluginMisbehaviourSummarised', data: { plugin, ...summary, byCode: { ...summary.byCode } } }).catch(
      (error: unknown) => this.options.log?.(`plugin ${plugin}: could not record its misbehaviour summary: ${(error as Error).message}`),
    );
  }

  // ── what a plugin asks ────────────────────────────────────────────────────────────────

  async registerTool(plugin: string, spec: ToolSpec): Promise<void> {
    this.need(plugin, 'tools');
    if (typeof spec?.name !== 'string' || !NAME.test(spec.name)) {
      throw new RegistrationRefused(`plugin '${plugin}': tool name ${JSON.stringify(spec?.name)} must be 1–64 letters, digits, '_' or '-'`);
    }
    const parameters = spec.parameters ?? { type: 'object', properties: {} };
    if (typeof parameters !== 'object' || Array.isArray(parameters)) {
      throw new RegistrationRefused(`plugin '${plugin}': tool '${spec.name}' needs 'parameters' as a JSON-Schema object`);
    }
    // Every turn offers every tool to the model: one that cannot be sent would fail every turn.
    const unfit = toolSizeProblem(spec.description, parameters) ?? toolParametersProblem(parameters as Readonly<Record<string, unknown>>);
    if (unfit) throw new RegistrationRefused(`plugin '${plugin}': tool '${spec.name}' ${unfit}`);
    const access = toolAccessOf(plugin, spec);
    const event: NewHologramEvent = {
      type: 'PluginToolRegistered',
      data: { plugin, name: spec.name, description: String(spec.description ?? ''), parameters, ...(access ? { access } : {}) },
    };
    await this.claim(plugin, 'tool', spec.name, event, () => {
      const detached = this.detachedRefusal(plugin, 'tools');
      if (detached) return detached;
      const held = [...this.state.tools.values()].filter((tool) => tool.plugin === plugin).length;
      return held >= TOOLS_PER_PLUGIN ? `it already has ${held} tools, the most one plugin may register; register fewer` : undefined;
    });
  }

  /** Why `plugin` may not register `kind` now (its were detached, until it is started afresh), or undefined. */
  private detachedRefusal(plugin: string, kind: ChargedKind): string | undefined {
    const entry = this.state.plugins.get(plugin);
    const why = kind === 'stages' ? entry?.stagesDetached : entry?.toolsDetached;
    const what = kind === 'stages' ? 'stage handlers' : 'tools';
    return why
      ? `its ${what} were detached (${why}); it may register ${what} again once started afresh ('homed plugins reload ${plugin}')`
      : undefined;
  }

  /** Returns the new handler's id. */
  async registerStage(plugin: string, spec: StageSpec): Promise<string> {
    this.need(plugin, 'stages');
    if (!(STAGES as readonly string[]).includes(spec?.stage)) {
      throw new RegistrationRefused(`plugin '${plugin}': stage ${JSON.stringify(spec?.stage)} is not one of ${STAGES.join(', ')}`);
    }
    const scope = spec.scope ?? 'global';
    if (scope !== 'global' && scope !== 'own_tools') {
      throw new RegistrationRefused(`plugin '${plugin}': scope ${JSON.stringify(scope)} must be 'global' or 'own_tools'`);
    }
    if (scope === 'own_tools' && !TOOL_STAGES.includes(spec.stage)) {
      throw new RegistrationRefused(
        `plugin '${plugin}': scope 'own_tools' only applies to ${TOOL_STAGES.join(' and ')}, not ${spec.stage}`,
      );
    }
    const handlerId = `${plugin}/${spec.stage}/${++this.handlerCount}`;
    // Decided in the append queue, so registrations sent at once are counted one after another.
    await this.appendDecided(() => {
      const detached = this.detachedRefusal(plugin, 'stages');
      if (detached) throw new RegistrationRefused(`plugin '${plugin}': ${detached}`);
      const onStage = this.state.handlers.filter((h) => h.plugin === plugin && h.stage === spec.stage).length;
      if (onStage >= STAGE_HANDLERS_PER_STAGE) {
        throw new RegistrationRefused(
          `plugin '${plugin}': it holds ${onStage} ${spec.stage} handlers already, the most one plugin may; one handler can do the work of several`,
        );
      }
      return { type: 'PluginStageRegistered', data: { plugin, handlerId, stage: spec.stage, scope } };
    });
    return handlerId;
  }

  async registerChannel(plugin: string, spec: ChannelSpec): Promise<void> {
    this.need(plugin, 'channels');
    if (typeof spec?.name !== 'string' || !/^[a-z0-9_]{1,40}$/.test(spec.name) || spec.name.endsWith('_help')) {
      throw new RegistrationRefused(
        `plugin '${plugin}': channel name ${JSON.stringify(spec?.name)} must be 1–40 lowercase letters, digits or '_', not ending in '_help'`,
      );
    }
    let capabilities = 0;
    for (const name of spec.capabilities ?? []) {
      const flag = Capability[name as CapabilityName];
      if (flag === undefined) {
        throw new RegistrationRefused(
          `plugin '${plugin}': channel capability '${String(name)}' is not one of ${Object.keys(Capability).join(', ')}`,
        );
      }
      capabilities |= flag;
    }
    const metaDoc = String(spec.metaDoc ?? '');
    if (metaDoc.length > CHANNEL_META_DOC_AT_MOST) {
      throw new RegistrationRefused(
        `plugin '${plugin}': channel ${spec.name} has a metaDoc over ${CHANNEL_META_DOC_AT_MOST} characters; say how to use it in fewer`,
      );
    }
    const event: NewHologramEvent = { type: 'PluginChannelRegistered', data: { plugin, name: spec.name, capabilities, metaDoc } };
    await this.claim(plugin, 'channel', spec.name, event, () => {
      const held = [...this.state.channels.values()].filter((c) => c.owner === plugin).length;
      return held >= CHANNELS_PER_PLUGIN
        ? `it already has ${held} channels, the most one plugin may register; one channel can carry several kinds of output`
        : undefined;
    });
  }

  async subscribe(plugin: string, types: readonly string[]): Promise<void> {
    this.need(plugin, 'subscribe');
    if (!Array.isArray(types) || types.some((t) => typeof t !== 'string' || t.length === 0)) {
      throw new RegistrationRefused(`plugin '${plugin}': subscribe needs a list of event type names`);
    }
    const unknown = types.find((t) => !EVENT_TYPES.includes(t));
    if (unknown !== undefined) {
      const near = closestNames(unknown, EVENT_TYPES);
      throw new RegistrationRefused(
        `plugin '${plugin}': there is no event type ${JSON.stringify(unknown.slice(0, 80))}` +
          `${near.length ? `; did you mean ${near.join(', ')}?` : ''} (plugins/PROTOCOL.md lists them)`,
      );
    }
    // Each type once: a subscription already held is no new event (a red team's plugin appended 14,772 of them).
    await this.appendDecided(() => {
      const held = this.state.subscriptions.get(plugin) ?? [];
      const fresh = [...new Set(types)].filter((t) => !held.includes(t));
      return fresh.length > 0 ? { type: 'PluginSubscribed', data: { plugin, types: fresh } } : null;
    });
  }

  injectInput(plugin: string, input: InjectedInput): Promise<InjectedReceipt> {
    this.need(plugin, 'input');
    return this.inject(plugin, input, 'queued', undefined);
  }

  injectInterrupt(plugin: string, input: InjectedInput, level: number): Promise<InjectedReceipt> {
    this.need(plugin, 'interrupt');
    if (!Number.isInteger(level) || level < 1) {
      throw new RegistrationRefused(
        `plugin '${plugin}': interrupt level ${JSON.stringify(level)} must be an integer 1–${MAX_PLUGIN_LEVEL}`,
      );
    }
    return this.inject(plugin, input, 'interrupt', level);
  }

  /**
   * A setting of the plugin's own subtree (`plugins.<plugin>.<key>`; `''` for all of it), with
   * every secret (keys, tokens, passwords, URL credentials) removed. Nothing outside it is readable.
   */
  setting(plugin: string, key: string): unknown {
    this.need(plugin, 'settings');
    if (typeof key !== 'string') throw new RegistrationRefused(`plugin '${plugin}': settings.get needs a string 'key'`);
    return pluginSetting(this.options.settings ?? {}, ['plugins', plugin, ...(key ? [key] : [])].join('.'));
  }

  recallMemory(plugin: string, query: string, k = 5): Promise<readonly MemoryItem[]> {
    this.need(plugin, 'memory');
    if (typeof query !== 'string' || !query.trim())
      throw new RegistrationRefused(`plugin '${plugin}': memory.recall needs a non-empty 'query'`);
    return this.memory().recall(query, Math.min(Math.max(1, Math.floor(Number(k) || 5)), 50));
  }

  async commitMemory(plugin: string, triples: readonly Triple[], sentence?: string): Promise<readonly string[]> {
    this.need(plugin, 'memory');
    if (this.external.has(plugin)) throw new CapabilityWithheld(plugin, 'memory (write)', ['memory (read)']);
    const ok =
      Array.isArray(triples) &&
      triples.length > 0 &&
      triples.every((t) => [t?.subject, t?.predicate, t?.object].every((v) => typeof v === 'string' && v.trim()));
    if (!ok)
      throw new RegistrationRefused(
        `plugin '${plugin}': memory.commit needs 'triples' as a non-empty list of { subject, predicate, object } strings`,
      );
    return this.memory().commit(plugin, triples, sentence);
  }

  queryKnowledge(plugin: string, entity: string, depth = 2): readonly KnowledgeRelation[] {
    this.need(plugin, 'knowledge');
    if (typeof entity !== 'string' || !entity.trim())
      throw new RegistrationRefused(`plugin '${plugin}': knowledge.query needs a non-empty 'entity'`);
    return this.memory().knowledge(entity, Math.min(Math.max(1, Math.floor(Number(depth) || 2)), 3));
  }

  private memory(): HubMemory {
    if (!this.options.memory) throw new PluginUnavailable('memory', 'the memory');
    return this.options.memory;
  }

  // ── what the kernel asks of plugins ───────────────────────────────────────────────────

  async callTool(name: string, args: Readonly<Record<string, unknown>>, call: ToolCallInfo): Promise<ToolReply> {
    const tool = this.state.tools.get(name);
    if (!tool) return { content: `tool '${name}' is not registered`, isError: true };
    if (this.budgets.isBarred('tools', tool.plugin)) {
      return { content: `tool '${name}' was detached: its plugin '${tool.plugin}' let its calls time out`, isError: true };
    }
    const endpoint = this.endpoints.get(tool.plugin);
    if (!endpoint) throw new PluginUnavailable(tool.plugin, `tool '${name}'`);
    const started = this.options.clock.now();
    return endpoint.callTool(name, args, call).catch((error: unknown) => {
      // A plugin that goes away after keeping the call waiting long cost the person as a timeout does.
      const waitedLong = error instanceof ConnectionClosed && this.options.clock.now() - started >= TOOL_LONG_WAIT_MS;
      // A guest's call (a plugin's input) is not charged: a guest could make a tool wait (a slow address
      // to fetch) until the person lost the plugin's tools.
      const persons = call.principal === undefined || isOwnerOrInternal(call.principal);
      if (error instanceof RequestTimedOut) {
        const budget = persons ? `; ${TOOL_TIMEOUTS_BUDGET} such within 10 minutes detach its tools until it is started afresh` : '';
        this.options.log?.(`plugin ${tool.plugin}: a call of tool '${name}' got no answer within ${error.timeoutMs / 1000} s${budget}`);
      }
      if ((error instanceof RequestTimedOut || waitedLong) && persons) this.charge('tools', tool.plugin, 1, 'a tool call timed out');
      throw error;
    });
  }

  runStage(handlerId: string, stage: StageName, context: StageContext): Promise<StageChange | null | undefined> {
    const handler = this.state.handlers.find((h) => h.id === handlerId);
    const endpoint = handler && this.endpoints.get(handler.plugin);
    if (!handler || !endpoint) return Promise.reject(new PluginUnavailable(handler?.plugin ?? '?', `stage handler '${handlerId}'`));
    if (this.budgets.isBarred('stages', handler.plugin)) {
      return Promise.reject(new PluginCallsDetached(`plugin '${handler.plugin}': its stage handlers were detached for holding turns up`));
    }
    const started = this.options.clock.now();
    const took = (): number => this.options.clock.now() - started;
    return endpoint.runStage(handlerId, stage, context).then(
      (change) => {
        const ms = took();
        const tooLarge = stageChangeTooLarge(change);
        // An oversized change is charged as a timeout: it cost the wait and gave nothing.
        const cost = tooLarge ? DEFAULT_STAGE_TIMEOUT_MS : stageCallCost(ms);
        this.charge('stages', handler.plugin, cost, tooLarge ? 'a change too large' : `an answer after ${ms} ms`);
        if (!tooLarge) return change;
        void this.misbehaved(handler.plugin, 'STAGE_CHANGE_TOO_LARGE', `stage handler ${handlerId} ${tooLarge}`).catch(() => undefined);
        throw new StageChangeTooLarge(`plugin '${handler.plugin}': stage handler ${handlerId} ${tooLarge}; the change is not applied`);
      },
      (error: unknown) => {
        const ms = took();
        const timedOut = error instanceof RequestTimedOut;
        this.charge(
          'stages',
          handler.plugin,
          timedOut ? error.timeoutMs : stageCallCost(ms),
          timedOut ? 'a timeout' : `a failure after ${ms} ms`,
        );
        throw error;
      },
    );
  }

  /**
   * Charges a plugin what one of its calls cost the person; once its charges within the window
   * reach the budget, all it holds of that kind is detached (recorded as misbehaviour too) and
   * neither a turn nor the model waits on it again until it is started afresh.
   */
  private charge(kind: ChargedKind, plugin: string, cost: number, last: string): void {
    const reason = this.budgets.charge(kind, plugin, this.options.clock.now(), cost, last);
    if (reason === undefined) return;
    const detach = async (): Promise<void> => {
      const code = kind === 'stages' ? 'STAGE_UNANSWERED' : 'TOOL_UNANSWERED';
      await this.misbehaved(
        plugin,
        code,
        `${reason}; its ${kind === 'stages' ? 'stage handlers' : 'tools'} are detached until it is started afresh`,
      );
      await this.appendDecided(() => {
        const { tools, handlers } = registrationsOf(this.state, plugin);
        // Recorded even when it holds none now (it went meanwhile): the bar must outlive its restart.
        return kind === 'tools'
          ? { type: 'PluginToolsDetached', data: { plugin, tools, reason } }
          : { type: 'PluginStagesDetached', data: { plugin, handlers, reason } };
      });
    };
    detach().catch((error: unknown) => this.options.log?.(`plugin ${plugin}: could not detach its ${kind}: ${(error as Error).message}`));
  }

  async deliver(delivery: ChannelDelivery): Promise<void> {
    const channel = this.state.channels.get(delivery.channel);
    const endpoint = channel && this.endpoints.get(channel.owner);
    if (!channel || !endpoint) throw new PluginUnavailable(channel?.owner ?? '?', `output channel '${delivery.channel}'`);
    await endpoint.deliver(delivery);
  }

  // ── internals ─────────────────────────────────────────────────────────────────────────

  private need(plugin: string, capability: PluginCapability): void {
    const granted = this.granted.get(plugin) ?? [];
    if (!granted.includes(capability)) throw new CapabilityWithheld(plugin, capability, granted);
  }

  private async inject(
    plugin: string,
    input: InjectedInput,
    kind: 'queued' | 'interrupt',
    declared: number | undefined,
  ): Promise<InjectedReceipt> {
    if (typeof input?.text !== 'string') throw new RegistrationRefused(`plugin '${plugin}': an input needs 'text' as a string`);
    // Each input is kept several times over (the scheduler's, the turn's, memory's): a bound keeps a plugin from filling the disk.
    if (this.external.has(plugin) && input.text.length > MAX_INJECTED_TEXT) {
      throw new RegistrationRefused(
        `plugin '${plugin}': an input's text is ${input.text.length.toLocaleString('en')} characters, more than the ` +
          `${MAX_INJECTED_TEXT.toLocaleString('en')} an input may hold; send a shorter one, or put the rest where a tool reads it`,
      );
    }
    const replyChannel = input.replyTo?.channel ?? null;
    // A built-in answers later on behalf of a conversation (a timer set from the cli replies there);
    // an external plugin replies only on its own channels.
    const owner = replyChannel === null ? null : this.state.channels.get(replyChannel)?.owner;
    if (replyChannel !== null && owner !== plugin && (this.external.has(plugin) || owner === undefined)) {
      throw new RegistrationRefused(
        `plugin '${plugin}': replyTo names channel '${replyChannel}', which is not ${owner === undefined ? 'a registered channel' : 'one of its own channels'}`,
      );
    }
    const principal = this.principalOf(plugin, input);
    const replyTarget = input.replyTo?.target ?? null;
    if (this.external.has(plugin)) {
      this.checkAddress(plugin, 'replyTo.target', replyTarget);
      this.checkAddress(plugin, 'conversation', input.conversation ?? null);
    }
    const conversation = this.conversationOf(plugin, input, replyChannel, replyTarget);
    const inputId = this.options.ids.next();
    const level = kind === 'queued' ? 0 : Math.min(declared ?? 1, MAX_PLUGIN_LEVEL);
    // The input is recorded once, in the scheduler's journal: what it says travels with it.
    const submit = () =>
      this.options.inputs?.submit({
        id: inputId,
        source: plugin,
        // Only a built-in speaks for the person (the cli, the web UI, a timer the person set).
        origin: principal === OWNER && !this.external.has(plugin) ? 'user' : 'plugin',
        kind,
        ...(kind === 'interrupt' ? { level } : {}),
        payload: { text: input.text, replyChannel, replyTarget, conversation, principal },
      });
    // Every check that may refuse comes before the bound, which counts what it admits until it is submitted.
    // An external plugin past its bound is refused before anything is recorded; the flood is
    // its misbehaviour, recorded once a window. Built-ins speak for the person (cli, web UI) or
    // bring back what was set (timer: at most 1,000, and a guest's 32 come back at L1): they are not bounded.
    if (!this.external.has(plugin)) {
      await submit();
      return { inputId, level };
    }
    const refusal = await this.injections.pass(plugin, kind, this.options.clock.now(), submit);
    if (refusal) {
      await this.misbehaved(plugin, 'INPUT_FLOOD', refusal.message, { once: true }).catch((error: unknown) =>
        this.options.log?.(`plugin ${plugin}: could not record its flood: ${(error as Error).message}`),
      );
      throw refusal;
    }
    return { inputId, level };
  }

  /**
   * An address an input names (whom to reply to, its conversation): printable text of at most
   * ADDRESS_AT_MOST characters. It is shown to the person (waiter's /approvals, the web UI, homed's
   * log) and kept with every note of the conversation: a line break or an escape in it could forge a line there.
   * @throws RegistrationRefused saying what an address may be
   */
  private checkAddress(plugin: string, field: string, address: unknown): void {
    if (address === null) return;
    const problem =
      typeof address !== 'string'
        ? `is ${address === undefined ? 'undefined' : typeof address}, not a string`
        : address.length > ADDRESS_AT_MOST
          ? `has ${address.length.toLocaleString('en')} characters, more than ${ADDRESS_AT_MOST}`
          : NOT_PRINTABLE.test(address)
            ? 'holds a control or formatting character (a line break, an escape, a direction override)'
            : undefined;
    if (problem) {
      throw new RegistrationRefused(
        `plugin '${plugin}': an input's ${field} ${problem}; an address is printable text (a peer's id, a chat's name)`,
      );
    }
  }

  /**
   * The conversation an injected input belongs to (its memory scope: the history its turn sees,
   * where its notes go). A built-in names any, or leaves it to the reply channel. An external
   * plugin's are its own only: `<its name or one of its channels>:<peer>`, by default
   * `<reply channel or its name>:<target or ->`, so it never reads nor writes the person's
   * conversation or another plugin's.
   * @throws RegistrationRefused naming the conversations it may use
   */
  private conversationOf(plugin: string, input: InjectedInput, replyChannel: string | null, replyTarget: string | null): string | null {
    const given = typeof input.conversation === 'string' && input.conversation ? input.conversation : null;
    if (!this.external.has(plugin)) return given;
    if (given === null) return `${replyChannel ?? plugin}:${replyTarget ?? '-'}`;
    const own = [plugin, ...[...this.state.channels.values()].filter((c) => c.owner === plugin).map((c) => c.name)];
    if (own.some((name) => given.startsWith(`${name}:`))) return given;
    throw new RegistrationRefused(
      `plugin '${plugin}': conversation ${JSON.stringify(given.slice(0, 120))} is not one of its own; a plugin's conversations ` +
        `are '<name>:<peer>' with <name> its own name or one of its channels (${own.join(', ')})`,
    );
  }

  /**
   * Who an injected input is from: a built-in plugin speaks as the owner or the kernel (default
   * the kernel); any other plugin as one of its manifest's profiles, or as itself. A name it did
   * not declare is refused, never replaced by a default.
   * @throws RegistrationRefused naming the declared profiles
   */
  private principalOf(plugin: string, input: InjectedInput): string {
    const { profile, principal } = input;
    if (principal !== undefined) {
      if (this.external.has(plugin) || typeof principal !== 'string' || principal === '') {
        throw new RegistrationRefused(
          `plugin '${plugin}': an input cannot name principal ${JSON.stringify(principal)}; give 'profile', one of its manifest's profiles`,
        );
      }
      return principal;
    }
    if (profile === undefined) return this.external.has(plugin) ? plugin : INTERNAL;
    const declared = Object.keys(this.profiles.get(plugin) ?? {});
    if (typeof profile !== 'string' || !declared.includes(profile)) {
      throw new RegistrationRefused(
        `plugin '${plugin}': profile ${JSON.stringify(profile)} is not declared in its manifest` +
          (declared.length ? ` (declared: ${declared.join(', ')})` : '; declare it under "profiles" in plugin.json'),
      );
    }
    return profile;
  }

  /** Every principal the loaded plugins declare. */
  declaredPrincipals(): string[] {
    return [...this.profiles.values()].flatMap((declared) => Object.keys(declared));
  }

  /** The tool rules of a plugin-declared principal (`<plugin>.<profile>`), if some plugin declares it. */
  profileOf(principal: string): PluginProfiles[string] | undefined {
    const plugin = principal.split('.')[0] ?? '';
    return this.profiles.get(plugin)?.[principal];
  }

  /**
   * Registers a name if nobody holds or reserves it, decided in the append queue: of two claims
   * of one name sent at once, exactly one is recorded; the other is refused and recorded as
   * misbehaviour (a plugin reaching for another's name).
   * @throws RegistrationRefused naming the holder and what to do
   */
  private async claim(
    plugin: string,
    kind: NameKind,
    name: string,
    event: NewHologramEvent,
    refusal: () => string | undefined = () => undefined,
  ): Promise<void> {
    try {
      await this.appendDecided(() => {
        const refused = refusal();
        if (refused !== undefined) throw new RegistrationRefused(`plugin '${plugin}': ${refused}`);
        const conflict = nameConflict(
          this.state,
          { builtins: this.builtins, held: this.builtinNames, loaded: this.loaded },
          plugin,
          kind,
          name,
        );
        if (conflict !== null) throw new NameTaken(`plugin '${plugin}': ${conflict}`);
        return event;
      });
    } catch (error) {
      if (error instanceof NameTaken) await this.misbehaved(plugin, 'NAME_TAKEN', error.message);
      throw error;
    }
    if (this.builtins.has(plugin)) this.builtinNames.set(name, plugin);
  }

  /** `value` with every secret value in its strings as its alias (as it is, with no vault). */
  scrub<T>(value: T): T {
    return this.options.scrub ? this.options.scrub(value) : value;
  }

  private append(event: NewHologramEvent): Promise<void> {
    return this.appendDecided(() => event);
  }

  /** Appends (and folds) what `decide` returns when its turn in the queue comes; null appends nothing. */
  private appendDecided(decide: () => NewHologramEvent | null): Promise<void> {
    const run = this.tail.then(async () => {
      const decided = decide();
      if (!decided) return;
      const event = { ...decided, data: this.scrub(decided.data) } as NewHologramEvent;
      await this.options.store.append(PLUGIN_REGISTRY_STREAM, [{ ...event, at: this.options.clock.now() }]);
      this.state = foldPluginRegistry(this.state, event);
      this.groups = foldProcessGroups(this.groups, event);
    });
    this.tail = run.catch(() => undefined);
    return run;
  }

  private publish(events: readonly RecordedEvent[]): void {
    for (const [plugin, types] of this.state.subscriptions) {
      const endpoint = this.endpoints.get(plugin);
      if (!endpoint) continue;
      for (const event of events) {
        if (!types.includes(event.type)) continue;
        try {
          endpoint.event({ seq: event.seq, stream: event.stream, type: event.type, at: event.at, data: publicData(event) });
        } catch (error) {
          this.options.log?.(`plugin ${plugin}: could not deliver event ${event.seq}: ${(error as Error).message}`);
        }
      }
    }
  }
}

/**
 * An event's data as a subscribed plugin receives it: a toolset without the firewall's inventory
 * (every secret's name and the tools it fills, the sandbox's rules and the daemon's files), which
 * would show a plugin what to aim a rewritten call at.
 */
const publicData = (event: RecordedEvent): unknown => {
  if (event.type !== 'ToolsetRecorded') return event.data;
  const { secrets, secretsRefused, sandbox, ...rest } = event.data as EventNamed<'ToolsetRecorded'>['data'];
  return rest;
};
