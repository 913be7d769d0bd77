/**
 * Model-based test of the plugin registry fold (fast-check `commands` + `modelRun`): random
 * registrations (tools, stage handlers, output channels, subscriptions), detachments and
 * supervisor facts are folded through `foldPluginRegistry` and must agree, after every
 * command, with a plain model made of arrays. The fold itself does not refuse a tool or
 * channel name that is taken (the hub does): commands draw names from a small pool so
 * duplicates are frequent, and a duplicate is modelled as the hub's refusal — it is not
 * folded, and the registry must show the name as taken. Stage registrations are always
 * valid (`own_tools` only on tool stages), as the hub only lets valid ones through.
 * Two more properties: folding is deterministic, and folding a prefix then the rest equals
 * folding everything (a left fold).
 *
 * `FC_RUNS=n` sets the number of runs (default 300). To replay a counterexample, set `FC_SEED`,
 * `FC_PATH` (both printed by fast-check on a failure) and `FC_REPLAY_PATH` (the `replayPath`
 * comment after the counterexample's commands).
 */
import { constants } from 'node:os';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { STAGES, TOOL_STAGES, type StageName } from '../../machines/stagePipeline/index.ts';
import {
  emptyPluginRegistry,
  foldPluginRegistry,
  registrationsOf,
  type PluginRegistry,
  type PluginState,
} from '../../projections/plugins/pluginRegistry.ts';

const RUNS = Number(process.env.FC_RUNS ?? 300);
const replay = {
  ...(process.env.FC_SEED ? { seed: Number(process.env.FC_SEED) } : {}),
  ...(process.env.FC_PATH ? { path: process.env.FC_PATH } : {}),
};
const replayPath = process.env.FC_REPLAY_PATH ? { replayPath: process.env.FC_REPLAY_PATH } : {};

const PLUGINS = ['alpha', 'beta', 'gamma'] as const;
const TOOL_NAMES = ['echo', 'time', 'files_read', 'files_write'] as const;
const CHANNEL_NAMES = ['cli', 'chat', 'mail'] as const;
const EVENT_TYPES = ['PluginEnabled', 'InputQueued', 'TurnStarted', 'ToolCalled'] as const;

type Event = Readonly<{ type: string; data: unknown }>;

// ---------------------------------------------------------------- the model

type ModelPlugin = {
  name: string;
  state: PluginState;
  enabled: boolean;
  restarts: number;
  crashes: number;
  lastError: string | null;
  stagesDetached: string | null;
  toolsDetached: string | null;
};

type Model = {
  tools: { plugin: string; name: string }[];
  handlers: { id: string; plugin: string; stage: StageName; scope: 'global' | 'own_tools' }[];
  channels: { plugin: string; name: string }[];
  subscriptions: { plugin: string; types: string[] }[];
  plugins: ModelPlugin[];
  /** The hub's handler counter: ids are `<plugin>/<stage>/<n>`, n counting from 1. */
  handlerCount: number;
};

const emptyModel = (): Model => ({ tools: [], handlers: [], channels: [], subscriptions: [], plugins: [], handlerCount: 0 });

const modelPlugin = (model: Model, name: string): ModelPlugin => {
  let entry = model.plugins.find((p) => p.name === name);
  if (!entry) {
    entry = { name, state: 'loaded', enabled: true, restarts: 0, crashes: 0, lastError: null, stagesDetached: null, toolsDetached: null };
    model.plugins.push(entry);
  }
  return entry;
};

const heldBy = (model: Model, plugin: string) => ({
  tools: model.tools.filter((t) => t.plugin === plugin).map((t) => t.name),
  handlers: model.handlers.filter((h) => h.plugin === plugin).map((h) => h.id),
  channels: model.channels.filter((c) => c.plugin === plugin).map((c) => c.name),
});

// ---------------------------------------------------------------- the real system

type Real = { registry: PluginRegistry; events: Event[] };

/** What the registry holds, as plain data (Map order kept: it is insertion order). */
const snapshot = (registry: PluginRegistry) => ({
  plugins: [...registry.plugins.values()],
  tools: [...registry.tools.values()],
  handlers: [...registry.handlers],
  channels: [...registry.channels.values()],
  subscriptions: [...registry.subscriptions],
});

/** Folds one event, checking the fold leaves the registry it was given as it was. */
const fold = (real: Real, event: Event): void => {
  const before = JSON.stringify(snapshot(real.registry));
  const previous = real.registry;
  real.registry = foldPluginRegistry(previous, event);
  real.events.push(event);
  expect(JSON.stringify(snapshot(previous)), `folding ${event.type} changed the registry it was given`).toBe(before);
};

const same = (actual: unknown, expected: unknown, label: string): void => {
  if (JSON.stringify(actual) !== JSON.stringify(expected)) expect(actual, label).toEqual(expected);
};

/** Everything the model knows, compared with the registry after every command. */
const agree = (model: Model, real: Real): void => {
  const { registry } = real;
  same(
    [...registry.tools.values()].map((t) => ({ plugin: t.plugin, name: t.name })),
    model.tools,
    'tools',
  );
  same(
    registry.handlers.map((h) => ({ id: h.id, plugin: h.plugin, stage: h.stage, scope: h.scope })),
    model.handlers,
    'handlers, in registration order',
  );
  same(
    [...registry.channels.values()].map((c) => ({ plugin: c.owner, name: c.name })),
    model.channels,
    'channels',
  );
  same(
    [...registry.subscriptions].map(([plugin, types]) => ({ plugin, types })),
    model.subscriptions,
    'subscriptions',
  );
  same(
    [...registry.plugins.values()].map((p) => ({
      name: p.name,
      state: p.state,
      enabled: p.enabled,
      restarts: p.restarts,
      crashes: p.crashes,
      lastError: p.lastError,
      stagesDetached: p.stagesDetached,
      toolsDetached: p.toolsDetached,
    })),
    model.plugins,
    'plugin entries (state, enabled, restarts, crashes, last error, stages detached)',
  );

  // Keys are the names they index.
  for (const [key, tool] of registry.tools) if (tool.name !== key) expect(tool.name).toBe(key);
  for (const [key, channel] of registry.channels) if (channel.name !== key) expect(channel.name).toBe(key);

  // Every registration belongs to exactly one plugin: the plugins' holdings partition the registry.
  const held = PLUGINS.map((p) => registrationsOf(registry, p));
  const partition = (lists: string[][], all: string[]) => {
    const flat = lists.flat();
    same(flat.length, new Set(flat).size, 'a registration counted for two plugins');
    same([...flat].sort(), [...all].sort(), 'registrations held by no plugin');
  };
  partition(
    held.map((h) => h.tools),
    [...registry.tools.keys()],
  );
  partition(
    held.map((h) => h.handlers),
    registry.handlers.map((h) => h.id),
  );
  partition(
    held.map((h) => h.channels),
    [...registry.channels.keys()],
  );

  // Handler ids were handed out in increasing order: the list is registration order.
  const counters = registry.handlers.map((h) => Number(h.id.split('/').at(-1)));
  same(
    counters,
    [...counters].sort((x, y) => x - y),
    'handlers out of registration order',
  );
};

// ---------------------------------------------------------------- commands

type Cmd = fc.Command<Model, Real>;

class RegisterTool implements Cmd {
  constructor(
    readonly plugin: string,
    readonly name: string,
  ) {}
  check = (): boolean => true;
  run(model: Model, real: Real): void {
    const taken = model.tools.some((t) => t.name === this.name);
    expect(real.registry.tools.has(this.name), `is tool '${this.name}' taken`).toBe(taken);
    if (!taken) {
      model.tools.push({ plugin: this.plugin, name: this.name });
      fold(real, {
        type: 'PluginToolRegistered',
        data: { plugin: this.plugin, name: this.name, description: `${this.name} tool`, parameters: { type: 'object' } },
      });
    }
    agree(model, real);
  }
  toString = (): string => `registerTool(${this.plugin}, ${this.name})`;
}

class RegisterStage implements Cmd {
  constructor(
    readonly plugin: string,
    readonly stage: StageName,
    readonly scope: 'global' | 'own_tools',
  ) {}
  check = (): boolean => true;
  run(model: Model, real: Real): void {
    const id = `${this.plugin}/${this.stage}/${++model.handlerCount}`;
    model.handlers.push({ id, plugin: this.plugin, stage: this.stage, scope: this.scope });
    fold(real, { type: 'PluginStageRegistered', data: { plugin: this.plugin, handlerId: id, stage: this.stage, scope: this.scope } });
    agree(model, real);
    expect(real.registry.handlers.at(-1)?.id, 'the newest handler runs last').toBe(id);
  }
  toString = (): string => `registerStage(${this.plugin}, ${this.stage}, ${this.scope})`;
}

class RegisterChannel implements Cmd {
  constructor(
    readonly plugin: string,
    readonly name: string,
    readonly capabilities: number,
  ) {}
  check = (): boolean => true;
  run(model: Model, real: Real): void {
    const taken = model.channels.some((c) => c.name === this.name);
    expect(real.registry.channels.has(this.name), `is channel '${this.name}' taken`).toBe(taken);
    if (!taken) {
      model.channels.push({ plugin: this.plugin, name: this.name });
      fold(real, {
        type: 'PluginChannelRegistered',
        data: { plugin: this.plugin, name: this.name, capabilities: this.capabilities, metaDoc: '' },
      });
      expect(real.registry.channels.get(this.name)?.capabilities).toBe(this.capabilities);
    }
    agree(model, real);
  }
  toString = (): string => `registerChannel(${this.plugin}, ${this.name}, ${this.capabilities})`;
}

class Subscribe implements Cmd {
  constructor(
    readonly plugin: string,
    readonly types: readonly string[],
  ) {}
  check = (): boolean => true;
  run(model: Model, real: Real): void {
    let entry = model.subscriptions.find((s) => s.plugin === this.plugin);
    if (!entry) {
      entry = { plugin: this.plugin, types: [] };
      model.subscriptions.push(entry);
    }
    for (const type of this.types) if (!entry.types.includes(type)) entry.types.push(type);
    fold(real, { type: 'PluginSubscribed', data: { plugin: this.plugin, types: [...this.types] } });
    agree(model, real);
  }
  toString = (): string => `subscribe(${this.plugin}, [${this.types.join(', ')}])`;
}

/** Detaches as the hub does: one event listing what the plugin holds, none when it holds nothing. */
class Detach implements Cmd {
  constructor(readonly plugin: string) {}
  check = (): boolean => true;
  run(model: Model, real: Real): void {
    const held = heldBy(model, this.plugin);
    same(registrationsOf(real.registry, this.plugin), held, `what ${this.plugin} holds before detaching`);
    const others = PLUGINS.filter((p) => p !== this.plugin).map(
      (p) => [p, registrationsOf(real.registry, p), real.registry.subscriptions.get(p)] as const,
    );
    const subscribed = model.subscriptions.some((s) => s.plugin === this.plugin);
    const eventsBefore = real.events.length;

    if (held.tools.length + held.handlers.length + held.channels.length > 0 || subscribed) {
      model.tools = model.tools.filter((t) => t.plugin !== this.plugin);
      model.handlers = model.handlers.filter((h) => h.plugin !== this.plugin);
      model.channels = model.channels.filter((c) => c.plugin !== this.plugin);
      model.subscriptions = model.subscriptions.filter((s) => s.plugin !== this.plugin);
      fold(real, { type: 'PluginRegistrationsDetached', data: { plugin: this.plugin, reason: 'stopped', ...held } });
    }

    agree(model, real);
    expect(registrationsOf(real.registry, this.plugin)).toEqual({ tools: [], handlers: [], channels: [] });
    expect(real.registry.subscriptions.has(this.plugin)).toBe(false);
    for (const [p, before, subscriptions] of others) {
      expect(registrationsOf(real.registry, p), `${p} untouched by detaching ${this.plugin}`).toEqual(before);
      expect(real.registry.subscriptions.get(p)).toEqual(subscriptions);
    }
    expect(real.events.length - eventsBefore).toBeLessThanOrEqual(1);
  }
  toString = (): string => `detach(${this.plugin})`;
}

/**
 * Detaches a plugin's stage handlers or its tools, as the hub does with a plugin whose calls held
 * turns up (even when it holds none of them now); it keeps everything else, and the bar is set.
 */
class DetachKind implements Cmd {
  constructor(
    readonly plugin: string,
    readonly kind: 'stages' | 'tools',
  ) {}
  check = (): boolean => true;
  run(model: Model, real: Real): void {
    const { plugin, kind } = this;
    const held = heldBy(model, plugin);
    const rest = (r: PluginRegistry) =>
      kind === 'stages'
        ? { tools: [...r.tools.keys()], channels: [...r.channels.keys()] }
        : { handlers: r.handlers.map((h) => h.id), channels: [...r.channels.keys()] };
    const before = rest(real.registry);
    if (kind === 'stages') {
      model.handlers = model.handlers.filter((h) => h.plugin !== plugin);
      modelPlugin(model, plugin).stagesDetached = 'unanswered';
      fold(real, { type: 'PluginStagesDetached', data: { plugin, handlers: held.handlers, reason: 'unanswered' } });
    } else {
      model.tools = model.tools.filter((t) => t.plugin !== plugin);
      modelPlugin(model, plugin).toolsDetached = 'unanswered';
      fold(real, { type: 'PluginToolsDetached', data: { plugin, tools: held.tools, reason: 'unanswered' } });
    }
    agree(model, real);
    expect(registrationsOf(real.registry, plugin)[kind === 'stages' ? 'handlers' : 'tools']).toEqual([]);
    expect(rest(real.registry)).toEqual(before);
  }
  toString = (): string => `detach${this.kind === 'stages' ? 'Stages' : 'Tools'}(${this.plugin})`;
}

type Crash = Readonly<{ exitCode?: number; signal?: string; error?: string }>;

/** What a code of 128 + a signal from 1 to 15 reads as, named as Node names it. */
const signalNote = (code: number): string => {
  const signal = Object.entries(constants.signals).find(([, n]) => n === code - 128 && n <= 15)?.[0];
  return signal ? ` (128 + ${signal}: as its sandbox reports a plugin that signal ended)` : '';
};
type Fact =
  | Readonly<{ type: 'PluginStarted' | 'PluginRestarting' | 'PluginDisabled' | 'PluginEnabled' | 'PluginStopped' | 'PluginLoaded' }>
  | Readonly<{ type: 'PluginCrashed'; crash: Crash }>
  | Readonly<{ type: 'PluginStarting'; attempt: number }>;

/** A supervisor fact (or the plugin's manifest being loaded again). */
class SupervisorFact implements Cmd {
  constructor(
    readonly plugin: string,
    readonly fact: Fact,
  ) {}
  check = (): boolean => true;
  run(model: Model, real: Real): void {
    const entry = modelPlugin(model, this.plugin);
    const at = 1_000;
    let data: Record<string, unknown> = { plugin: this.plugin, at };
    switch (this.fact.type) {
      case 'PluginStarting':
        entry.state = 'starting';
        // Attempt 0 is a fresh start (a person's, or the boot's): restarts count from there, and stages may be registered again.
        if (this.fact.attempt === 0) {
          entry.restarts = 0;
          entry.stagesDetached = null;
          entry.toolsDetached = null;
        }
        data = { ...data, attempt: this.fact.attempt };
        break;
      case 'PluginStarted':
        entry.state = 'running';
        break;
      case 'PluginCrashed': {
        const { crash } = this.fact;
        entry.state = 'crashed';
        entry.crashes += 1;
        entry.lastError =
          crash.error !== undefined
            ? crash.error
            : crash.signal !== undefined
              ? `exited with signal ${crash.signal}`
              : `exited with code ${crash.exitCode}${signalNote(crash.exitCode!)}`;
        data = { ...data, ...crash, crashCount: entry.crashes };
        break;
      }
      case 'PluginRestarting':
        entry.state = 'backoff';
        entry.restarts += 1;
        data = { ...data, attempt: entry.restarts, delayMs: 100 };
        break;
      case 'PluginStopped':
        entry.state = 'stopped';
        data = { ...data, reason: 'requested' };
        break;
      case 'PluginDisabled':
        entry.enabled = false;
        break;
      case 'PluginEnabled':
        entry.enabled = true;
        break;
      case 'PluginLoaded':
        if (entry.state === 'stopped') entry.state = 'loaded';
        data = {
          plugin: this.plugin,
          version: '1.0.0',
          kind: 'builtin',
          entry: '',
          capabilities: ['tools'],
          autoStart: true,
          autoRestart: true,
        };
        break;
    }
    const registrations = snapshot(real.registry);
    fold(real, { type: this.fact.type, data });
    agree(model, real);
    const after = snapshot(real.registry);
    same(
      { tools: after.tools, handlers: after.handlers, channels: after.channels, subscriptions: after.subscriptions },
      {
        tools: registrations.tools,
        handlers: registrations.handlers,
        channels: registrations.channels,
        subscriptions: registrations.subscriptions,
      },
      'a supervisor fact leaves registrations alone',
    );
  }
  toString = (): string =>
    `${this.fact.type}(${this.plugin}${'crash' in this.fact ? `, ${JSON.stringify(this.fact.crash)}` : ''}${'attempt' in this.fact ? `, attempt ${this.fact.attempt}` : ''})`;
}

const pluginArb = fc.constantFrom(...PLUGINS);
const stageArb = fc
  .constantFrom(...STAGES)
  .chain((stage) =>
    fc.tuple(
      fc.constant(stage),
      TOOL_STAGES.includes(stage) ? fc.constantFrom<'global' | 'own_tools'>('global', 'own_tools') : fc.constant<'global'>('global'),
    ),
  );
const crashArb: fc.Arbitrary<Crash> = fc.oneof(
  fc.record({ exitCode: fc.integer({ min: 0, max: 255 }) }),
  fc.record({ signal: fc.constantFrom('SIGKILL', 'SIGTERM', 'SIGSEGV') }),
  fc.record({ error: fc.constantFrom('spawn ENOENT', 'handshake timed out'), exitCode: fc.integer({ min: 0, max: 3 }) }),
);
const factArb: fc.Arbitrary<Fact> = fc.oneof(
  fc
    .constantFrom('PluginStarted', 'PluginRestarting', 'PluginDisabled', 'PluginEnabled', 'PluginStopped', 'PluginLoaded')
    .map((type) => ({ type })),
  crashArb.map((crash) => ({ type: 'PluginCrashed' as const, crash })),
  fc.integer({ min: 0, max: 3 }).map((attempt) => ({ type: 'PluginStarting' as const, attempt })),
);

const commandArbs: fc.Arbitrary<Cmd>[] = [
  fc.tuple(pluginArb, fc.constantFrom(...TOOL_NAMES)).map(([p, name]) => new RegisterTool(p, name)),
  fc.tuple(pluginArb, stageArb).map(([p, [stage, scope]]) => new RegisterStage(p, stage, scope)),
  fc
    .tuple(pluginArb, fc.constantFrom(...CHANNEL_NAMES), fc.integer({ min: 1, max: 31 }))
    .map(([p, name, caps]) => new RegisterChannel(p, name, caps)),
  fc
    .tuple(pluginArb, fc.array(fc.constantFrom(...EVENT_TYPES), { minLength: 1, maxLength: 3 }))
    .map(([p, types]) => new Subscribe(p, types)),
  pluginArb.map((p) => new Detach(p)),
  fc.tuple(pluginArb, fc.constantFrom<'stages' | 'tools'>('stages', 'tools')).map(([p, kind]) => new DetachKind(p, kind)),
  fc.tuple(pluginArb, factArb).map(([p, fact]) => new SupervisorFact(p, fact)),
];

// ---------------------------------------------------------------- arbitrary event lists

/** Any plugin event the fold knows (valid or not as the hub would judge), and events of other subsystems. */
const eventArb: fc.Arbitrary<Event> = fc.oneof(
  fc
    .tuple(pluginArb, fc.constantFrom(...TOOL_NAMES))
    .map(([plugin, name]) => ({ type: 'PluginToolRegistered', data: { plugin, name, description: '', parameters: {} } })),
  fc.tuple(pluginArb, stageArb, fc.nat(20)).map(([plugin, [stage, scope], n]) => ({
    type: 'PluginStageRegistered',
    data: { plugin, handlerId: `${plugin}/${stage}/${n}`, stage, scope },
  })),
  fc
    .tuple(pluginArb, fc.constantFrom(...CHANNEL_NAMES))
    .map(([plugin, name]) => ({ type: 'PluginChannelRegistered', data: { plugin, name, capabilities: 1, metaDoc: '' } })),
  fc
    .tuple(pluginArb, fc.array(fc.constantFrom(...EVENT_TYPES)))
    .map(([plugin, types]) => ({ type: 'PluginSubscribed', data: { plugin, types } })),
  fc
    .tuple(pluginArb, fc.constantFrom(...TOOL_NAMES))
    .map(([plugin, name]) => ({ type: 'PluginToolsDetached', data: { plugin, tools: [name], reason: 'unanswered' } })),
  fc.tuple(pluginArb, stageArb, fc.nat(20)).map(([plugin, [stage], n]) => ({
    type: 'PluginStagesDetached',
    data: { plugin, handlers: [`${plugin}/${stage}/${n}`], reason: 'unanswered' },
  })),
  pluginArb.map((plugin) => ({
    type: 'PluginRegistrationsDetached',
    data: { plugin, reason: 'stopped', tools: [], handlers: [], channels: [] },
  })),
  fc.tuple(pluginArb, factArb).map(([plugin, fact]) => ({
    type: fact.type,
    data: { plugin, at: 0, version: '1', kind: 'builtin', capabilities: [], ...('crash' in fact ? fact.crash : {}) },
  })),
  fc.constantFrom('TurnStarted', 'InputQueued', 'PluginMisbehaved').map((type) => ({ type, data: { plugin: 'alpha', turnId: 't-1' } })),
);

const foldAll = (events: readonly Event[], from: PluginRegistry = emptyPluginRegistry()): PluginRegistry =>
  events.reduce(foldPluginRegistry, from);

describe('plugin registry fold', () => {
  it(`agrees with a plain model over random registrations, detachments and supervisor facts (${RUNS} runs)`, () => {
    fc.assert(
      fc.property(fc.commands(commandArbs, { maxCommands: 80, size: 'medium', ...replayPath }), (commands) => {
        fc.modelRun(() => ({ model: emptyModel(), real: { registry: emptyPluginRegistry(), events: [] } }), commands);
      }),
      { numRuns: RUNS, ...replay },
    );
  });

  it(`is deterministic: folding the same events twice gives equal registries (${RUNS} runs)`, () => {
    fc.assert(
      fc.property(fc.array(eventArb, { maxLength: 60 }), (events) => {
        expect(foldAll(events)).toEqual(foldAll(events));
      }),
      { numRuns: RUNS, ...replay },
    );
  });

  it(`is a left fold: a prefix folded, then the rest, equals folding everything (${RUNS} runs)`, () => {
    fc.assert(
      fc.property(
        fc.array(eventArb, { maxLength: 60 }).chain((events) => fc.tuple(fc.constant(events), fc.nat(events.length))),
        ([events, cut]) => {
          expect(foldAll(events.slice(cut), foldAll(events.slice(0, cut)))).toEqual(foldAll(events));
        },
      ),
      { numRuns: RUNS, ...replay },
    );
  });
});
