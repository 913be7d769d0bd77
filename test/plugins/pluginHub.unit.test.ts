/**
 * The plugin hub against an in-memory store, with in-process plugins attached through
 * `attachLocalPlugin`: capability checks, refusals that append nothing, interrupt levels,
 * detachment (live and after a killed process), event subscriptions, and reaching tools.
 */
import type { PluginManifest } from '../../plugins/sdk/manifestTypes.ts';
import { afterEach, describe, expect, it, vi } from 'vitest';
import {
  createDefaultCatalog,
  InMemoryEventStore,
  PLUGIN_REGISTRY_STREAM,
  SequentialIds,
  VirtualClock,
  type NewHologramEvent,
  type RecordedEvent,
} from '../../events/index.ts';
import { STAGES } from '../../machines/stagePipeline/index.ts';
import { DEFAULT_STAGE_TIMEOUT_MS } from '../../machines/turn/index.ts';
import { attachLocalPlugin } from '../../plugins/host/localPlugin.ts';
import {
  ADDRESS_AT_MOST,
  PluginHub,
  type HubMemory,
  PluginUnavailable,
  type InputSink,
  STAGE_HANDLERS_PER_STAGE,
  TOOL_DESCRIPTION_AT_MOST,
  TOOL_PARAMETERS_AT_MOST,
  TOOL_PARAMETERS_DEPTH,
  TOOLS_PER_PLUGIN,
  CHANNEL_META_DOC_AT_MOST,
  CHANNELS_PER_PLUGIN,
} from '../../plugins/host/pluginHub.ts';
import { ConnectionClosed, RequestTimedOut } from '../../plugins/protocol/errors.ts';
import type { PluginEvent, Triple } from '../../plugins/sdk/pluginApi.ts';
import {
  CALLS_WINDOW_MS,
  STAGE_BUDGET_MS,
  STAGE_FREE_MS,
  TOOL_LONG_WAIT_MS,
  TOOL_TIMEOUTS_BUDGET,
} from '../../plugins/host/callCharges.ts';
import { STAGE_CHANGE_AT_MOST, StageChangeTooLarge } from '../../plugins/host/stageChangeSize.ts';
import type { PluginCapability } from '../../plugins/sdk/wireMethods.ts';

type Submitted = Parameters<InputSink['submit']>[0];

const hubs: PluginHub[] = [];

afterEach(async () => {
  await Promise.all(hubs.splice(0).map((hub) => hub.stop()));
});

const newStore = () => new InMemoryEventStore(createDefaultCatalog(), new VirtualClock(0), new SequentialIds('evt'));

const manifestOf = (name: string): PluginManifest => ({
  name,
  version: '1.0.0',
  entry: 'main.js',
  kind: 'subprocess',
  platforms: [],
  requires_facilities: [],
  capabilities: ['input'],
  auto_start: true,
  auto_restart: true,
});

/** A restored hub on `store` (a fresh one by default), a recording input sink, and a way to attach plugins. */
const given = async (store = newStore(), settings?: Record<string, unknown>) => {
  const submitted: Submitted[] = [];
  const inputs: InputSink = {
    submit: async (input) => {
      submitted.push(input);
    },
    state: () => ({ running: null, stack: [], queue: [], inbox: [], pending: [], cancelBudget: [] }),
  };
  const committed: { plugin: string; triples: readonly Triple[] }[] = [];
  const memory: HubMemory = {
    recall: async (query) => [{ tier: 'cold', text: `about ${query}`, cites: ['D1:1'], score: 1 }],
    commit: async (plugin, triples) => {
      committed.push({ plugin, triples });
      return triples.map((_, i) => `r${i}`);
    },
    knowledge: (entity) => [{ subject: entity, predicate: 'lives_in', object: 'london', confidence: 1, sentence: null, hops: 1 }],
  };
  const clock = new VirtualClock(1_000);
  const hub = new PluginHub({
    store,
    clock,
    ids: new SequentialIds('input'),
    inputs,
    memory,
    ...(settings ? { settings } : {}),
  });
  hubs.push(hub);
  await hub.restore();
  const plugin = (name: string, capabilities: readonly PluginCapability[], external = false) =>
    attachLocalPlugin(hub, name, capabilities, () => undefined, { external });
  const registryEvents = async (): Promise<readonly RecordedEvent[]> => store.readStream(PLUGIN_REGISTRY_STREAM);
  return { store, hub, plugin, submitted, registryEvents, committed, clock };
};

const ALL: readonly PluginCapability[] = ['tools', 'stages', 'channels', 'subscribe', 'input', 'interrupt', 'settings'];
const tool = (name: string) => ({ name, description: `${name} does things`, parameters: { type: 'object', properties: {} } }) as const;
const reply = (text: string) => () => text;
const call = (name: string) => ({ callId: 'call-1', name });

describe('capabilities', () => {
  const withheld = [
    { capability: 'tools', act: (api: ReturnType<typeof attachLocalPlugin>) => api.registerTool(tool('a_echo'), reply('hi')) },
    { capability: 'stages', act: (api: ReturnType<typeof attachLocalPlugin>) => api.registerStage({ stage: 'on_input' }, () => null) },
    {
      capability: 'channels',
      act: (api: ReturnType<typeof attachLocalPlugin>) =>
        api.registerOutputChannel({ name: 'chat', capabilities: ['text'] }, async () => {}),
    },
    { capability: 'subscribe', act: (api: ReturnType<typeof attachLocalPlugin>) => api.subscribe(['PluginEnabled'], () => {}) },
    { capability: 'input', act: (api: ReturnType<typeof attachLocalPlugin>) => api.injectInput({ text: 'hello' }) },
    { capability: 'interrupt', act: (api: ReturnType<typeof attachLocalPlugin>) => api.injectInterrupt({ text: 'hello' }, 2) },
  ] as const;

  it.each(withheld)(
    'a $capability call without the $capability capability is refused with CAPABILITY_WITHHELD and appends nothing',
    async ({ capability, act }) => {
      const { store, plugin, submitted } = await given();
      const others = ALL.filter((c) => c !== capability);
      const api = plugin('a', others);

      let refusal: unknown;
      try {
        await act(api);
      } catch (error) {
        refusal = error;
      }

      expect(refusal).toMatchObject({ code: 'CAPABILITY_WITHHELD' });
      expect((refusal as Error).message).toContain(`'${capability}'`);
      expect(await store.headSeq()).toBe(0);
      expect(submitted).toEqual([]);
    },
  );
});

describe('settings', () => {
  const settings = {
    llm: { sources: [{ name: 'a', apiKey: 'sk-1' }] },
    plugins: { a: { city: 'Oslo', token: 't-1', nested: { depth: 2 } }, b: { city: 'Bergen' } },
  };

  it('a plugin reads its own subtree (without secrets) and nothing of the settings outside it', async () => {
    const { plugin } = await given(newStore(), settings);
    const api = plugin('a', ['settings']);
    expect(await api.setting('')).toEqual({ city: 'Oslo', nested: { depth: 2 } });
    expect(await api.setting('nested.depth')).toBe(2);
    expect(await api.setting('token')).toBeUndefined();
    for (const outside of ['llm', 'plugins', '..b', '.', 'city.length', '__proto__']) expect(await api.setting(outside)).toBeUndefined();
    expect(await plugin('b', ['settings']).setting('city')).toBe('Bergen');
  });

  it('a key that is not a string is refused', async () => {
    const { plugin } = await given(newStore(), settings);
    await expect(plugin('a', ['settings']).setting(7 as never)).rejects.toMatchObject({ code: 'REGISTRATION_REFUSED' });
  });
});

describe('registrations refused', () => {
  it('a tool name another plugin already registered is refused with REGISTRATION_REFUSED (recorded as misbehaviour), and the first registration stays', async () => {
    const { hub, plugin, registryEvents } = await given();
    await plugin('a', ['tools']).registerTool(tool('echo'), reply('from a'));

    await expect(plugin('b', ['tools']).registerTool(tool('echo'), reply('from b'))).rejects.toMatchObject({
      code: 'REGISTRATION_REFUSED',
      message: expect.stringContaining("already registered by 'a'"),
    });

    expect(hub.registry.tools.get('echo')?.plugin).toBe('a');
    expect((await registryEvents()).map((e) => e.type)).toEqual(['PluginToolRegistered', 'PluginMisbehaved']);
    expect((await registryEvents())[1]!.data).toMatchObject({ plugin: 'b', code: 'NAME_TAKEN' });
    expect(await hub.callTool('echo', {}, call('echo'))).toBe('from a');
  });

  it('a tool too big to offer on every turn, or with a schema no provider takes, is refused, and so is a tool past the most one plugin may hold', async () => {
    const { hub, plugin } = await given();
    const api = plugin('big', ['tools']);
    let deep: Record<string, unknown> = { type: 'string' };
    // Each level is two of JSON (the schema, then its properties): this nests twice too deep.
    for (let i = 0; i < TOOL_PARAMETERS_DEPTH; i++) deep = { type: 'object', properties: { p: deep } };
    const refusedFor = (spec: object) =>
      expect(api.registerTool(spec as ReturnType<typeof tool>, reply('x'))).rejects.toMatchObject({ code: 'REGISTRATION_REFUSED' });
    await refusedFor({ ...tool('big_deep'), parameters: deep });
    await refusedFor({ ...tool('big_said'), description: 'x'.repeat(TOOL_DESCRIPTION_AT_MOST + 1) });
    await refusedFor({
      ...tool('big_wide'),
      parameters: { type: 'object', properties: { p: { description: 'y'.repeat(TOOL_PARAMETERS_AT_MOST) } } },
    });
    // A schema no provider takes would fail every turn that offers it.
    await refusedFor({ ...tool('big_ref'), parameters: { type: 'object', properties: { p: { $ref: '#/$defs/nowhere' } } } });
    await refusedFor({ ...tool('big_type'), parameters: { type: 'array', items: { type: 'string' } } });
    expect([...hub.registry.tools.keys()].filter((name) => name.startsWith('big_'))).toEqual([]);
    for (let i = 0; i < TOOLS_PER_PLUGIN; i++) await api.registerTool(tool(`big_${i}`), reply('x'));
    await expect(api.registerTool(tool('big_one_more'), reply('x'))).rejects.toMatchObject({
      message: expect.stringContaining(`already has ${TOOLS_PER_PLUGIN} tools`),
    });
  });

  // Red team round 10: a plugin registered 14,791 channels and as many subscriptions (homed plugins took 30 s), and
  // forty channel descriptions of 4 MiB (the log grew by 164 MB).
  it('refuses a channel past the most one plugin may hold or with too long a description, and records each subscribed type once, naming none that is not one', async () => {
    const { hub, plugin, registryEvents } = await given();
    const api = plugin('wide', ['channels', 'subscribe']);
    const channel = (name: string, metaDoc = 'one') => api.registerOutputChannel({ name, capabilities: ['text'], metaDoc }, () => {});
    await expect(channel('wordy', 'm'.repeat(CHANNEL_META_DOC_AT_MOST + 1))).rejects.toMatchObject({
      code: 'REGISTRATION_REFUSED',
      message: expect.stringContaining(`metaDoc over ${CHANNEL_META_DOC_AT_MOST} characters`),
    });
    for (let i = 0; i < CHANNELS_PER_PLUGIN; i++) await channel(`wide_${i}`);
    await expect(channel('wide_more')).rejects.toMatchObject({
      message: expect.stringContaining(`already has ${CHANNELS_PER_PLUGIN} channels`),
    });
    expect([...hub.registry.channels.keys()].filter((name) => name.startsWith('wide_'))).toHaveLength(CHANNELS_PER_PLUGIN);
    await api.subscribe(['PluginEnabled', 'PluginEnabled', 'TaskStarted'], () => {});
    await api.subscribe(['TaskStarted', 'PluginEnabled'], () => {});
    await expect(api.subscribe(['TaskStarteed'], () => {})).rejects.toMatchObject({
      code: 'REGISTRATION_REFUSED',
      message: expect.stringContaining('there is no event type "TaskStarteed"; did you mean TaskStarted?'),
    });
    const subscribed = (await registryEvents()).filter((e) => e.type === 'PluginSubscribed').map((e) => e.data);
    expect(subscribed).toEqual([{ plugin: 'wide', types: ['PluginEnabled', 'TaskStarted'] }]);
  });

  it('a stage name that is not a stage is refused with a message listing every stage', async () => {
    const { store, plugin } = await given();
    const refused = plugin('a', ['stages']).registerStage({ stage: 'on_lunch' as never }, () => null);
    await expect(refused).rejects.toMatchObject({ code: 'REGISTRATION_REFUSED' });
    const message = await refused.catch((error: Error) => error.message);
    for (const stage of STAGES) expect(message).toContain(stage);
    expect(await store.headSeq()).toBe(0);
  });

  it("scope 'own_tools' on a stage that does not run around a tool is refused, naming the tool stages", async () => {
    const { store, plugin } = await given();
    await expect(plugin('a', ['stages']).registerStage({ stage: 'on_input', scope: 'own_tools' }, () => null)).rejects.toMatchObject({
      code: 'REGISTRATION_REFUSED',
      message: expect.stringMatching(/only applies to before_toolcall and after_toolcall, not on_input/),
    });
    expect(await store.headSeq()).toBe(0);
  });

  it.each(['Chat', 'chat-room', '', 'x'.repeat(41), 'chat_help'])(
    'channel name %j is refused with a message saying what a name must be',
    async (name) => {
      const { store, plugin } = await given();
      await expect(plugin('a', ['channels']).registerOutputChannel({ name, capabilities: ['text'] }, async () => {})).rejects.toMatchObject(
        {
          code: 'REGISTRATION_REFUSED',
          message: expect.stringContaining("must be 1–40 lowercase letters, digits or '_', not ending in '_help'"),
        },
      );
      expect(await store.headSeq()).toBe(0);
    },
  );

  it('a channel capability that does not exist is refused with a message listing the capabilities', async () => {
    const { store, plugin } = await given();
    await expect(
      plugin('a', ['channels']).registerOutputChannel({ name: 'chat', capabilities: ['text', 'video' as never] }, async () => {}),
    ).rejects.toMatchObject({
      code: 'REGISTRATION_REFUSED',
      message: expect.stringContaining("channel capability 'video' is not one of text, file, image, audio, structured"),
    });
    expect(await store.headSeq()).toBe(0);
  });
});

describe('injected inputs', () => {
  it('an interrupt asked at level 4 is submitted at level 3, what it says travelling with it (recorded once, by the scheduler)', async () => {
    const { plugin, submitted, registryEvents } = await given();

    const receipt = await plugin('a', ['interrupt']).injectInterrupt({ text: 'wake up' }, 4);

    expect(receipt.level).toBe(3);
    expect(await registryEvents()).toEqual([]);
    const payload = { text: 'wake up', replyChannel: null, replyTarget: null, conversation: null, principal: 'internal' };
    expect(submitted).toEqual([{ id: receipt.inputId, source: 'a', origin: 'plugin', kind: 'interrupt', level: 3, payload }]);
  });

  it('an interrupt within 1–3 keeps its level', async () => {
    const { plugin, submitted } = await given();
    const receipt = await plugin('a', ['interrupt']).injectInterrupt({ text: 'psst' }, 2);
    expect(receipt.level).toBe(2);
    expect(submitted[0]).toMatchObject({ kind: 'interrupt', level: 2 });
  });

  it('an input is queued at L0 and submitted without a level', async () => {
    const { plugin, submitted, registryEvents } = await given();

    const receipt = await plugin('a', ['input']).injectInput({ text: 'do this later' });

    expect(receipt.level).toBe(0);
    expect(await registryEvents()).toEqual([]);
    const payload = { text: 'do this later', replyChannel: null, replyTarget: null, conversation: null, principal: 'internal' };
    expect(submitted).toEqual([{ id: receipt.inputId, source: 'a', origin: 'plugin', kind: 'queued', payload }]);
  });

  it('an input says who it is from: a profile the plugin declared, else the plugin itself; a built-in speaks as the kernel or as whom it names', async () => {
    const { hub, plugin, submitted } = await given();
    await hub.load({ ...manifestOf('qq'), profiles: { 'qq.guest': { deny: ['files_*'] }, 'qq.owner': {} } });
    const qq = plugin('qq', ['input'], true);
    await qq.injectInput({ text: 'hi', profile: 'qq.guest' });
    await qq.injectInput({ text: 'hi' });
    await plugin('timer', ['input']).injectInput({ text: 'due', principal: 'qq.guest' });
    await plugin('cli', ['input']).injectInput({ text: 'me' });
    expect(submitted.map((s) => s.payload.principal)).toEqual(['qq.guest', 'qq', 'qq.guest', 'internal']);
    expect(hub.profileOf('qq.guest')).toEqual({ deny: ['files_*'] });
    expect(hub.profileOf('other.guest')).toBeUndefined();
  });

  it('an external plugin naming a profile it did not declare, or a principal, is refused at injection and nothing is submitted', async () => {
    const { hub, plugin, submitted } = await given();
    await hub.load({ ...manifestOf('qq'), profiles: { 'qq.guest': {} } });
    const qq = plugin('qq', ['input'], true);
    await expect(qq.injectInput({ text: 'hi', profile: 'qq.owner' })).rejects.toMatchObject({
      code: 'REGISTRATION_REFUSED',
      message: expect.stringContaining('profile "qq.owner" is not declared in its manifest (declared: qq.guest)'),
    });
    await expect(qq.injectInput({ text: 'hi', principal: 'owner' })).rejects.toMatchObject({
      message: expect.stringContaining('an input cannot name principal "owner"'),
    });
    expect(submitted).toEqual([]);
  });

  it("an external plugin's replyTo naming a channel of another plugin is refused, and nothing is recorded or submitted", async () => {
    const { store, plugin, submitted } = await given();
    await plugin('b', ['channels']).registerOutputChannel({ name: 'chat', capabilities: ['text'] }, async () => {});
    const before = await store.headSeq();

    await expect(plugin('a', ['input'], true).injectInput({ text: 'hi', replyTo: { channel: 'chat' } })).rejects.toMatchObject({
      code: 'REGISTRATION_REFUSED',
      message: expect.stringContaining("replyTo names channel 'chat', which is not one of its own channels"),
    });

    expect(await store.headSeq()).toBe(before);
    expect(submitted).toEqual([]);
  });

  it("an external plugin's inputs stay in its own conversations: the person's or another plugin's is refused, and none is shared", async () => {
    const { plugin, submitted } = await given();
    await plugin('cli', ['channels']).registerOutputChannel({ name: 'cli', capabilities: ['text'] }, async () => {});
    const eaves = plugin('eaves', ['channels', 'input'], true);
    await eaves.registerOutputChannel({ name: 'eaves_chat', capabilities: ['text'] }, async () => {});
    for (const conversation of ['cli:root', 'eavesdrop:x', 'other:eaves', '-:-']) {
      await expect(eaves.injectInput({ text: 'what did the user say?', conversation })).rejects.toMatchObject({
        code: 'REGISTRATION_REFUSED',
        message: expect.stringContaining(`conversation "${conversation}" is not one of its own`),
      });
    }
    expect(submitted).toEqual([]);

    await eaves.injectInput({ text: 'a', conversation: 'eaves_chat:ada' });
    await eaves.injectInput({ text: 'b', conversation: 'eaves:bob' });
    await eaves.injectInput({ text: 'c', replyTo: { channel: 'eaves_chat', target: 'ada' } });
    await eaves.injectInput({ text: 'd' });
    await plugin('quiet', ['input'], true).injectInput({ text: 'e' });
    expect(submitted.map((s) => s.payload.conversation)).toEqual(['eaves_chat:ada', 'eaves:bob', 'eaves_chat:ada', 'eaves:-', 'quiet:-']);
  });

  // Shown to the person in waiter's /approvals, the web UI and homed's log, an address with a line break or an escape forged lines there.
  it("an external plugin's reply target and conversation are printable text of at most ADDRESS_AT_MOST characters", async () => {
    const { plugin, submitted } = await given();
    const forger = plugin('forger', ['channels', 'input'], true);
    await forger.registerOutputChannel({ name: 'forger', capabilities: ['text'] }, async () => {});
    const refusals: [Record<string, unknown>, string][] = [
      [{ replyTo: { channel: 'forger', target: 'u1\nhomed: stopped' } }, 'replyTo.target holds a control or formatting character'],
      [{ replyTo: { channel: 'forger', target: '\u001b[31mred' } }, 'replyTo.target holds a control'],
      [{ replyTo: { channel: 'forger', target: 'a\u202Eb' } }, 'replyTo.target holds a control'],
      [{ replyTo: { channel: 'forger', target: 'x'.repeat(ADDRESS_AT_MOST + 1) } }, `more than ${ADDRESS_AT_MOST}`],
      [{ replyTo: { channel: 'forger', target: 42 } }, 'replyTo.target is number, not a string'],
      [{ conversation: 'forger:a\u2028b' }, 'conversation holds a control'],
    ];
    for (const [more, message] of refusals) {
      await expect(forger.injectInput({ text: 'hi', ...more } as never)).rejects.toMatchObject({
        code: 'REGISTRATION_REFUSED',
        message: expect.stringContaining(message),
      });
    }
    expect(submitted).toEqual([]);
    await forger.injectInput({ text: 'hi', replyTo: { channel: 'forger', target: `ädá 李 ${'x'.repeat(ADDRESS_AT_MOST - 9)}` } });
    expect(submitted).toHaveLength(1);
  });

  it("a built-in answers on behalf of a conversation on another plugin's channel (a timer on the cli), not on a channel nobody has", async () => {
    const { plugin, submitted } = await given();
    await plugin('cli', ['channels']).registerOutputChannel({ name: 'cli', capabilities: ['text'] }, async () => {});
    const timer = plugin('timer', ['interrupt']);
    await timer.injectInterrupt({ text: 'Timer t1 fired', replyTo: { channel: 'cli', target: 's2' }, conversation: 'cli:ada' }, 3);
    expect(submitted.at(-1)).toMatchObject({ payload: { replyChannel: 'cli', replyTarget: 's2', conversation: 'cli:ada' } });
    await expect(timer.injectInterrupt({ text: 'x', replyTo: { channel: 'qq' } }, 3)).rejects.toMatchObject({
      message: expect.stringContaining("'qq', which is not a registered channel"),
    });
  });

  it('replyTo naming one of its own channels is submitted with the target', async () => {
    const { plugin, submitted } = await given();
    const api = plugin('a', ['channels', 'input']);
    await api.registerOutputChannel({ name: 'chat', capabilities: ['text'] }, async () => {});

    await api.injectInput({ text: 'hi', replyTo: { channel: 'chat', target: 'session-7' } });

    expect(submitted.at(-1)).toMatchObject({ payload: { text: 'hi', replyChannel: 'chat', replyTarget: 'session-7' } });
  });
});

describe('detach', () => {
  it('detaches a registration that was still being appended when the plugin went', async () => {
    const { hub, plugin, registryEvents } = await given();
    const a = plugin('a', ALL);
    const registering = a.registerTool(tool('a_late'), reply('late'));
    await hub.detach('a', 'crashed');
    await registering.catch(() => undefined);
    expect(hub.registry.tools.has('a_late')).toBe(false);
    expect((await registryEvents()).map((e) => e.type)).toEqual(['PluginToolRegistered', 'PluginRegistrationsDetached']);
    expect((await registryEvents())[1]!.data).toMatchObject({ tools: ['a_late'] });
  });

  it('revokes what a detached plugin was granted: it cannot register any more', async () => {
    const { hub, plugin, registryEvents } = await given();
    const a = plugin('a', ALL);
    await hub.detach('a', 'crashed');
    await expect(a.registerTool(tool('a_ghost'), reply('boo'))).rejects.toMatchObject({ code: 'CAPABILITY_WITHHELD' });
    expect(await registryEvents()).toEqual([]);
  });

  it("appends one PluginRegistrationsDetached listing the plugin's tools, handlers and channels, and removes them", async () => {
    const { hub, plugin, registryEvents } = await given();
    const a = plugin('a', ALL);
    await a.registerTool(tool('a_echo'), reply('a'));
    await a.registerTool(tool('a_time'), reply('noon'));
    await a.registerStage({ stage: 'on_input' }, () => null);
    await a.registerOutputChannel({ name: 'a_chat', capabilities: ['text'] }, async () => {});
    await a.subscribe(['PluginEnabled'], () => {});
    const before = (await registryEvents()).length;
    const handlerId = hub.registry.handlers[0]?.id;

    await hub.detach('a', 'stopped');

    const appended = (await registryEvents()).slice(before);
    expect(appended.map((e) => e.type)).toEqual(['PluginRegistrationsDetached']);
    expect(appended[0]?.data).toEqual({
      plugin: 'a',
      reason: 'stopped',
      tools: ['a_echo', 'a_time'],
      handlers: [handlerId],
      channels: ['a_chat'],
    });
    expect([...hub.registry.tools.keys()]).toEqual([]);
    expect(hub.registry.handlers).toEqual([]);
    expect([...hub.registry.channels.keys()]).toEqual([]);
    expect(hub.registry.subscriptions.has('a')).toBe(false);
    expect(hub.isAttached('a')).toBe(false);
  });

  it("leaves every other plugin's registrations in place", async () => {
    const { hub, plugin, registryEvents } = await given();
    const a = plugin('a', ALL);
    const b = plugin('b', ALL);
    await a.registerTool(tool('a_echo'), reply('a'));
    await b.registerTool(tool('b_echo'), reply('b'));
    await a.registerStage({ stage: 'on_input' }, () => null);
    await b.registerStage({ stage: 'on_input' }, () => null);
    await a.registerOutputChannel({ name: 'a_chat', capabilities: ['text'] }, async () => {});
    await b.registerOutputChannel({ name: 'b_chat', capabilities: ['text'] }, async () => {});
    await b.subscribe(['PluginEnabled'], () => {});

    await hub.detach('a', 'stopped');

    const detached = (await registryEvents()).at(-1);
    expect(detached?.data).toMatchObject({ tools: ['a_echo'], channels: ['a_chat'] });
    expect((detached!.data as { handlers: string[] }).handlers).toHaveLength(1);
    expect([...hub.registry.tools.values()].map((t) => [t.name, t.plugin])).toEqual([['b_echo', 'b']]);
    expect(hub.registry.handlers.map((h) => h.plugin)).toEqual(['b']);
    expect([...hub.registry.channels.values()].map((c) => [c.name, c.owner])).toEqual([['b_chat', 'b']]);
    expect(hub.registry.subscriptions.get('b')).toEqual(['PluginEnabled']);
    expect(hub.isAttached('b')).toBe(true);
    expect(await hub.callTool('b_echo', {}, call('b_echo'))).toBe('b');
  });

  it('appends nothing for a plugin that held nothing', async () => {
    const { store, hub, plugin } = await given();
    plugin('a', ALL);
    await plugin('b', ALL).registerTool(tool('b_echo'), reply('b'));
    const before = await store.headSeq();

    await hub.detach('a', 'stopped');

    expect(await store.headSeq()).toBe(before);
    expect(hub.isAttached('a')).toBe(false);
  });
});

describe('restore', () => {
  /** What a killed process left: a loaded plugin with registrations and no detachment. */
  const killedProcessLog = async () => {
    const store = newStore();
    const events: NewHologramEvent[] = [
      {
        type: 'PluginLoaded',
        data: {
          plugin: 'a',
          version: '1.0.0',
          kind: 'builtin',
          entry: '',
          capabilities: ['tools', 'stages', 'channels'],
          autoStart: true,
          autoRestart: true,
        },
      },
      { type: 'PluginToolRegistered', data: { plugin: 'a', name: 'a_echo', description: '', parameters: {} } },
      { type: 'PluginStageRegistered', data: { plugin: 'a', handlerId: 'a/on_input/1', stage: 'on_input', scope: 'global' } },
      { type: 'PluginChannelRegistered', data: { plugin: 'a', name: 'a_chat', capabilities: 1, metaDoc: '' } },
    ];
    await store.append(PLUGIN_REGISTRY_STREAM, events);
    return store;
  };

  it("detaches what a killed process's plugins still held, with reason 'the kernel restarted'", async () => {
    const { hub, registryEvents } = await given(await killedProcessLog());

    const last = (await registryEvents()).at(-1);
    expect(last?.type).toBe('PluginRegistrationsDetached');
    expect(last?.data).toEqual({
      plugin: 'a',
      reason: 'the kernel restarted',
      tools: ['a_echo'],
      handlers: ['a/on_input/1'],
      channels: ['a_chat'],
    });
    expect(hub.registry.tools.size + hub.registry.handlers.length + hub.registry.channels.size).toBe(0);
    expect(hub.registry.plugins.get('a')?.version).toBe('1.0.0');
  });

  it('appends nothing when the previous process detached everything', async () => {
    const store = await killedProcessLog();
    await store.append(PLUGIN_REGISTRY_STREAM, [
      {
        type: 'PluginRegistrationsDetached',
        data: { plugin: 'a', reason: 'stopped', tools: ['a_echo'], handlers: ['a/on_input/1'], channels: ['a_chat'] },
      },
    ]);
    const before = await store.headSeq();

    await given(store);

    expect(await store.headSeq()).toBe(before);
  });

  it('numbers new stage handlers after those of earlier boots', async () => {
    const { hub, plugin } = await given(await killedProcessLog());
    await plugin('a', ['stages']).registerStage({ stage: 'on_input' }, () => null);
    expect(hub.registry.handlers.map((h) => h.id)).toEqual(['a/on_input/2']);
  });
});

describe('subscriptions', () => {
  it('an event of a subscribed type appended after the subscription reaches the listener; other types do not', async () => {
    const { store, plugin } = await given();
    const received: PluginEvent[] = [];
    await plugin('a', ['subscribe']).subscribe(['PluginEnabled'], (event) => received.push(event));

    await store.append('plugin-x:1', [{ type: 'PluginDisabled', data: { plugin: 'x', at: 5 } }]);
    await store.append('plugin-x:1', [{ type: 'PluginEnabled', data: { plugin: 'x', at: 6 }, at: 6 }]);

    await vi.waitFor(() => expect(received).toHaveLength(1));
    const enabledSeq = await store.headSeq();
    expect(received).toEqual([{ seq: enabledSeq, stream: 'plugin-x:1', type: 'PluginEnabled', at: 6, data: { plugin: 'x', at: 6 } }]);
  });

  it("the hub hands a plugin's endpoint only the event types it subscribed to (a remote plugin does no filtering of its own)", async () => {
    const { store, hub } = await given();
    const reached: string[] = [];
    const unreachable = () => Promise.reject(new Error('not used'));
    hub.attach('remote', ['subscribe'], {
      callTool: unreachable,
      runStage: unreachable,
      deliver: unreachable,
      event: (event) => reached.push(event.type),
    });
    await hub.subscribe('remote', ['PluginEnabled']);

    await store.append('plugin-x:1', [{ type: 'PluginDisabled', data: { plugin: 'x', at: 5 } }]);
    await store.append('plugin-x:1', [{ type: 'PluginEnabled', data: { plugin: 'x', at: 6 } }]);

    await vi.waitFor(() => expect(reached).toContain('PluginEnabled'));
    expect(reached).toEqual(['PluginEnabled']);
  });

  it("a toolset reaches a subscriber without the firewall's inventory: no secret names, no sandbox", async () => {
    const { store, plugin } = await given();
    const received: PluginEvent[] = [];
    await plugin('a', ['subscribe']).subscribe(['ToolsetRecorded'], (event) => received.push(event));
    const toolset = { toolset: 'abc', tools: [], handlers: {}, channels: [] };
    await store.append('toolsets', [
      {
        type: 'ToolsetRecorded',
        data: {
          ...toolset,
          secrets: [{ name: 'BANK_TOKEN', tools: ['files_write'] }],
          secretsRefused: 'not from the owner',
          sandbox: { rules: { write: ['/home/ada/files'] }, base: { cwd: '/home/ada', home: '/home/ada' }, protectedPaths: ['/x'] },
        },
      },
    ]);
    await vi.waitFor(() => expect(received).toHaveLength(1));
    expect(received[0]!.data).toEqual(toolset);
    const [recorded] = await store.readAll({ types: ['ToolsetRecorded'] });
    expect(recorded!.data.secrets).toEqual([{ name: 'BANK_TOKEN', tools: ['files_write'] }]);
  });

  it('a detached plugin no longer receives the events it subscribed to', async () => {
    const { store, hub, plugin } = await given();
    const receivedA: string[] = [];
    const receivedB: string[] = [];
    await plugin('a', ['subscribe']).subscribe(['PluginEnabled'], (event) => receivedA.push(event.type));
    await plugin('b', ['subscribe']).subscribe(['PluginEnabled'], (event) => receivedB.push(event.type));
    await hub.detach('a', 'stopped');

    await store.append('plugin-x:1', [{ type: 'PluginEnabled', data: { plugin: 'x', at: 6 } }]);

    await vi.waitFor(() => expect(receivedB).toEqual(['PluginEnabled']));
    expect(receivedA).toEqual([]);
  });
});

describe('stage handlers that hold turns up', () => {
  const timedOut = () => Promise.reject(new RequestTimedOut('runStage', 1, DEFAULT_STAGE_TIMEOUT_MS));
  const context = { input: 'hi' } as unknown as Parameters<PluginHub['runStage']>[2];
  type Answer = () => Promise<unknown>;

  /** A remote plugin 'slow' whose stage calls answer as `answers` says, one by one (the last one for good), with a tool. */
  const givenSlow = async (...answers: Answer[]) => {
    const session = await given();
    let calls = 0;
    const next = () => {
      calls++;
      return (answers.length > 1 ? answers.shift()! : answers[0]!)();
    };
    const endpoint = { callTool: async () => 'pong', runStage: () => next() as Promise<null>, deliver: timedOut, event: () => undefined };
    session.hub.attach('slow', ['stages', 'tools'], endpoint);
    const onInput = await session.hub.registerStage('slow', { stage: 'on_input' });
    const spare = await session.hub.registerStage('slow', { stage: 'pre_action' });
    await session.hub.registerTool('slow', tool('slow_ping'));
    const ask = (handlerId = onInput) => session.hub.runStage(handlerId, 'on_input', context).catch((error: unknown) => error);
    const detached = async () => (await session.registryEvents()).filter((e) => e.type === 'PluginStagesDetached');
    return { ...session, onInput, spare, ask, detached, endpoint, calls: () => calls };
  };
  const timeouts = STAGE_BUDGET_MS / DEFAULT_STAGE_TIMEOUT_MS;

  it(`are all detached once the plugin's calls held turns up ${STAGE_BUDGET_MS / 1_000} s within 10 minutes (${timeouts} timeouts), recorded with why; it keeps its tools`, async () => {
    const { hub, onInput, spare, ask, detached, registryEvents, calls } = await givenSlow(timedOut);
    for (let i = 1; i < timeouts; i++) await ask();
    expect(hub.registry.handlers.map((h) => h.id)).toEqual([onInput, spare]);

    expect(await ask()).toBeInstanceOf(RequestTimedOut);
    // Barred at once: no call reaches the plugin while the detach is appended, and the refusal says why.
    expect(await ask(spare)).toMatchObject({
      code: 'PLUGIN_CALLS_DETACHED',
      message: expect.stringContaining('detached for holding turns up'),
    });
    expect(calls()).toBe(timeouts);
    await vi.waitFor(() => expect(hub.registry.handlers).toEqual([]));
    expect((await detached()).map((e) => e.data)).toEqual([
      { plugin: 'slow', handlers: [onInput, spare], reason: expect.stringContaining('(the last: a timeout)') },
    ]);
    const misbehaved = (await registryEvents()).filter((e) => e.type === 'PluginMisbehaved');
    expect(misbehaved.map((e) => e.data)).toEqual([expect.objectContaining({ plugin: 'slow', code: 'STAGE_UNANSWERED' })]);
    expect(hub.registry.plugins.get('slow')?.stagesDetached).toContain('held turns up');
    expect(await hub.callTool('slow_ping', {}, call('slow_ping'))).toBe('pong');
  });

  it('charges across its handlers and through quick answers in between: spare handlers or answering between timeouts wash nothing out', async () => {
    const { hub, spare, ask, detached } = await givenSlow(
      timedOut,
      async () => null,
      async () => null,
      timedOut,
      timedOut,
    );
    await ask();
    await ask(spare);
    await ask(spare);
    await ask();
    expect(await detached()).toEqual([]);
    await ask();
    await vi.waitFor(() => expect(hub.registry.handlers).toEqual([]));
  });

  it(`charges slow answers and slow failures by the time past ${STAGE_FREE_MS} ms; quick ones cost nothing`, async () => {
    let clockOf: VirtualClock | undefined;
    const answerAfter = (ms: number, fail: boolean) => async () => {
      clockOf!.advance(ms);
      if (fail) throw new Error('no');
      return null;
    };
    const slow = 2_400;
    const perCall = slow - STAGE_FREE_MS;
    const needed = Math.ceil(STAGE_BUDGET_MS / perCall);
    const answers = Array.from({ length: needed }, (_, i) => answerAfter(slow, i % 2 === 1));
    const { hub, ask, detached, clock } = await givenSlow(answerAfter(0, true), answerAfter(STAGE_FREE_MS, false), ...answers);
    clockOf = clock;
    for (let i = 0; i < needed + 1; i++) await ask();
    expect(hub.registry.handlers).toHaveLength(2);
    expect(await ask()).toBeNull(); // the last slow answer still comes back: the bar falls after it
    expect(await ask()).toMatchObject({ code: 'PLUGIN_CALLS_DETACHED' });
    await vi.waitFor(async () => expect((await detached()).map((e) => (e.data as { reason: string }).reason)).toHaveLength(1));
    expect(hub.registry.handlers).toEqual([]);
  });

  it('lets charges older than 10 minutes go', async () => {
    const quick = async () => null;
    const { ask, spare, clock } = await givenSlow(...Array.from({ length: timeouts }, () => timedOut), quick);
    for (let i = 1; i < timeouts; i++) await ask();
    clock.advance(CALLS_WINDOW_MS);
    await ask();
    // Not barred: the call reaches the plugin and its answer comes back.
    expect(await ask(spare)).toBeNull();
  });

  it("keeps what a plugin's calls cost through its crash restarts, and bars its stage handlers through them once detached; a fresh start clears both", async () => {
    const { hub, ask, endpoint, registryEvents } = await givenSlow(timedOut);
    for (let i = 1; i < timeouts; i++) await ask();
    // It crashes just before the last timeout would detach it, and comes back.
    await hub.detach('slow', 'crashed');
    hub.observe({ type: 'PluginStarting', data: { plugin: 'slow', attempt: 1, at: 2_000 } });
    hub.attach('slow', ['stages'], endpoint);
    const again = await hub.registerStage('slow', { stage: 'on_input' });
    expect(await hub.runStage(again, 'on_input', context).catch((error: unknown) => error)).toBeInstanceOf(RequestTimedOut);
    await vi.waitFor(async () => expect((await registryEvents()).map((e) => e.type)).toContain('PluginStagesDetached'));

    const refused = { code: 'REGISTRATION_REFUSED', message: expect.stringContaining("once started afresh ('homed plugins reload slow')") };
    await hub.detach('slow', 'crashed');
    hub.observe({ type: 'PluginStarting', data: { plugin: 'slow', attempt: 1, at: 3_000 } });
    hub.attach('slow', ['stages'], endpoint);
    await expect(hub.registerStage('slow', { stage: 'pre_action' })).rejects.toMatchObject(refused);

    hub.observe({ type: 'PluginStarting', data: { plugin: 'slow', attempt: 0, at: 4_000 } });
    const fresh = await hub.registerStage('slow', { stage: 'pre_action' });
    expect(await hub.runStage(fresh, 'on_input', context).catch((error: unknown) => error)).toBeInstanceOf(RequestTimedOut);
    expect(hub.registry.handlers.map((h) => h.id)).toEqual([fresh]);
  });

  it(`holds at most ${STAGE_HANDLERS_PER_STAGE} handlers of one plugin on one stage`, async () => {
    const { hub, plugin } = await given();
    const api = plugin('many', ['stages']);
    for (let i = 0; i < STAGE_HANDLERS_PER_STAGE; i++) await api.registerStage({ stage: 'on_input' }, () => null);
    await expect(api.registerStage({ stage: 'on_input' }, () => null)).rejects.toMatchObject({
      code: 'REGISTRATION_REFUSED',
      message: expect.stringContaining(`it holds ${STAGE_HANDLERS_PER_STAGE} on_input handlers already`),
    });
    await api.registerStage({ stage: 'pre_action' }, () => null);
    expect(hub.registry.handlers).toHaveLength(STAGE_HANDLERS_PER_STAGE + 1);
  });

  it('counts registrations sent all at once one after another: no more than the most get through', async () => {
    const { hub, plugin } = await given();
    const api = plugin('many', ['stages']);
    const outcomes = await Promise.allSettled(Array.from({ length: 10 }, () => api.registerStage({ stage: 'on_input' }, () => null)));
    expect(outcomes.filter((o) => o.status === 'fulfilled')).toHaveLength(STAGE_HANDLERS_PER_STAGE);
    expect(hub.registry.handlers).toHaveLength(STAGE_HANDLERS_PER_STAGE);
  });

  it('refuses a change carrying more text than a message may, records it, does not hand it on, and charges it as a timeout', async () => {
    const { hub, ask, registryEvents } = await givenSlow(async () => ({ inject: ['z'.repeat(STAGE_CHANGE_AT_MOST)] }));
    const refused = await ask();
    expect(refused).toBeInstanceOf(StageChangeTooLarge);
    expect((refused as Error).message).toContain(`over ${STAGE_CHANGE_AT_MOST} characters`);
    await vi.waitFor(async () =>
      expect((await registryEvents()).filter((e) => e.type === 'PluginMisbehaved').map((e) => (e.data as { code: string }).code)).toEqual([
        'STAGE_CHANGE_TOO_LARGE',
      ]),
    );
    expect(hub.registry.handlers).toHaveLength(2);
    for (let i = 1; i < timeouts; i++) await ask();
    await vi.waitFor(() => expect(hub.registry.handlers).toEqual([]));
  });
});

describe('tools that let their calls time out', () => {
  const timedOut = () => Promise.reject(new RequestTimedOut('tool.call', 1, 60_000));

  /** A remote plugin 'mute' with two tools whose calls go as `answers` says, one by one (the last one for good). */
  const givenMute = async (...answers: (() => Promise<unknown>)[]) => {
    const session = await given();
    const next = () => (answers.length > 1 ? answers.shift()! : answers[0]!)();
    session.hub.attach('mute', ['tools', 'stages'], {
      callTool: () => next() as Promise<string>,
      runStage: async () => null,
      deliver: timedOut,
      event: () => undefined,
    });
    await session.hub.registerTool('mute', tool('mute_wait'));
    await session.hub.registerTool('mute', tool('mute_spare'));
    const handlerId = await session.hub.registerStage('mute', { stage: 'on_input' });
    const use = (name = 'mute_wait') => session.hub.callTool(name, {}, call(name)).catch((error: unknown) => error);
    const detached = async () => (await session.registryEvents()).filter((e) => e.type === 'PluginToolsDetached');
    return { ...session, use, detached, handlerId };
  };

  it(`are all detached once ${TOOL_TIMEOUTS_BUDGET} of the plugin's calls within 10 minutes timed out, whichever tool; its stages stay`, async () => {
    const { hub, use, detached, handlerId, registryEvents } = await givenMute(timedOut, async () => 'ok', timedOut);
    await use();
    expect(await use('mute_spare')).toBe('ok');
    expect(await detached()).toEqual([]);
    expect(await use('mute_spare')).toBeInstanceOf(RequestTimedOut);
    await vi.waitFor(() => expect([...hub.registry.tools.keys()]).toEqual([]));
    expect((await detached()).map((e) => e.data)).toEqual([
      {
        plugin: 'mute',
        tools: ['mute_wait', 'mute_spare'],
        reason: expect.stringContaining('tool calls within 10 minutes got no answer in time'),
      },
    ]);
    const codes = (await registryEvents()).filter((e) => e.type === 'PluginMisbehaved').map((e) => (e.data as { code: string }).code);
    expect(codes).toEqual(['TOOL_UNANSWERED']);
    expect(hub.registry.handlers.map((h) => h.id)).toEqual([handlerId]);
    expect(await hub.callTool('mute_wait', {}, call('mute_wait'))).toEqual({
      content: "tool 'mute_wait' is not registered",
      isError: true,
    });
  });

  // A guest could make a tool wait (a slow address to fetch) until the person lost the plugin's tools.
  it("does not charge the timeouts of a guest's calls", async () => {
    const { hub, detached } = await givenMute(timedOut);
    const asGuest = { ...call('mute_wait'), principal: 'qq.guest', conversation: 'qq:eve' };
    for (let i = 0; i < TOOL_TIMEOUTS_BUDGET + 1; i++) {
      expect(await hub.callTool('mute_wait', {}, asGuest).catch((error: unknown) => error)).toBeInstanceOf(RequestTimedOut);
    }
    expect(await detached()).toEqual([]);
    expect([...hub.registry.tools.keys()]).toEqual(['mute_wait', 'mute_spare']);
  });

  it(`charges a call the plugin ends by going away after ${TOOL_LONG_WAIT_MS / 1_000} s as a timeout; going away sooner is not charged`, async () => {
    let clockOf: VirtualClock | undefined;
    const goneAfter = (ms: number) => async () => {
      clockOf!.advance(ms);
      throw new ConnectionClosed('the process exited');
    };
    const { hub, use, detached, clock } = await givenMute(
      goneAfter(TOOL_LONG_WAIT_MS - 1),
      goneAfter(TOOL_LONG_WAIT_MS),
      goneAfter(TOOL_LONG_WAIT_MS),
    );
    clockOf = clock;
    await use();
    await use();
    expect(hub.registry.tools.size).toBe(2);
    await use();
    await vi.waitFor(async () => expect(await detached()).toHaveLength(1));
  });

  it('records the detach even when the plugin went meanwhile, so its restart stays barred', async () => {
    let timeOut!: () => void;
    const pending = () => new Promise<string>((_, reject) => (timeOut = () => reject(new RequestTimedOut('tool.call', 2, 60_000))));
    const { hub, use, detached } = await givenMute(timedOut, pending);
    await use();
    const second = use();
    await hub.detach('mute', 'crashed');
    timeOut();
    await second;
    await vi.waitFor(async () =>
      expect((await detached()).map((e) => e.data)).toEqual([expect.objectContaining({ plugin: 'mute', tools: [] })]),
    );
    hub.observe({ type: 'PluginStarting', data: { plugin: 'mute', attempt: 1, at: 2_000 } });
    hub.attach('mute', ['tools'], { callTool: async () => 'ok', runStage: async () => null, deliver: timedOut, event: () => undefined });
    await expect(hub.registerTool('mute', tool('mute_wait'))).rejects.toMatchObject({ code: 'REGISTRATION_REFUSED' });
  });

  it('counts a tool failing in its own words as an answer', async () => {
    const { use, detached } = await givenMute(timedOut, () => Promise.reject(new Error('no such file')));
    for (let i = 0; i < 10; i++) await use();
    expect(await detached()).toEqual([]);
  });

  it('keeps them off through crash restarts, and lets a fresh start register them again', async () => {
    const { hub, use } = await givenMute(timedOut);
    for (let i = 0; i < TOOL_TIMEOUTS_BUDGET; i++) await use();
    await vi.waitFor(() => expect([...hub.registry.tools.keys()]).toEqual([]));
    await hub.detach('mute', 'crashed');
    hub.observe({ type: 'PluginStarting', data: { plugin: 'mute', attempt: 1, at: 2_000 } });
    hub.attach('mute', ['tools'], { callTool: async () => 'ok', runStage: async () => null, deliver: timedOut, event: () => undefined });
    await expect(hub.registerTool('mute', tool('mute_wait'))).rejects.toMatchObject({
      code: 'REGISTRATION_REFUSED',
      message: expect.stringContaining("once started afresh ('homed plugins reload mute')"),
    });
    hub.observe({ type: 'PluginStarting', data: { plugin: 'mute', attempt: 0, at: 3_000 } });
    await hub.registerTool('mute', tool('mute_wait'));
    expect(await hub.callTool('mute_wait', {}, call('mute_wait'))).toBe('ok');
  });

  it(`holds at most ${TOOLS_PER_PLUGIN} tools of a plugin even when it sends its registrations all at once`, async () => {
    const { hub, plugin, registryEvents } = await given();
    const api = plugin('burst', ['tools']);
    const outcomes = await Promise.allSettled(
      Array.from({ length: TOOLS_PER_PLUGIN + 5 }, (_, i) => api.registerTool(tool(`burst_${i}`), reply('x'))),
    );
    expect(outcomes.filter((o) => o.status === 'fulfilled')).toHaveLength(TOOLS_PER_PLUGIN);
    expect([...hub.registry.tools.keys()]).toHaveLength(TOOLS_PER_PLUGIN);
    // Refused for its number, not for a name another holds.
    expect((await registryEvents()).filter((e) => e.type === 'PluginMisbehaved')).toEqual([]);
  });
});

describe('calling tools', () => {
  it('reaches the handler of the plugin that registered the tool', async () => {
    const { hub, plugin } = await given();
    await plugin('a', ['tools']).registerTool(tool('a_add'), (args) => String(Number(args.x) + Number(args.y)));
    expect(await hub.callTool('a_add', { x: 2, y: 3 }, call('a_add'))).toBe('5');
  });

  it('a tool call made while its plugin is being detached is refused with PLUGIN_UNAVAILABLE', async () => {
    const { hub, plugin } = await given();
    await plugin('a', ['tools']).registerTool(tool('a_echo'), reply('a'));

    const detaching = hub.detach('a', 'crashed');
    const calling = hub.callTool('a_echo', {}, call('a_echo'));

    await expect(calling).rejects.toBeInstanceOf(PluginUnavailable);
    await expect(calling).rejects.toMatchObject({
      code: 'PLUGIN_UNAVAILABLE',
      message: expect.stringContaining("plugin 'a' is not running"),
    });
    await detaching;
  });

  it('a tool of a detached plugin is no longer registered: calling it gives an error result', async () => {
    const { hub, plugin } = await given();
    await plugin('a', ['tools']).registerTool(tool('a_echo'), reply('a'));
    await hub.detach('a', 'crashed');

    expect(await hub.callTool('a_echo', {}, call('a_echo'))).toEqual({ content: "tool 'a_echo' is not registered", isError: true });
  });

  it('a tool nobody registered gives an error result, not a throw', async () => {
    const { hub } = await given();
    expect(await hub.callTool('nope', {}, call('nope'))).toEqual({ content: "tool 'nope' is not registered", isError: true });
  });
});

describe('memory and knowledge', () => {
  it('lets a built-in plugin recall and commit, and an external one only recall (its memory is read-only)', async () => {
    const { plugin, committed } = await given();
    const inside = plugin('inside', ['memory']);
    const outside = plugin('outside', ['memory'], true);
    expect(await outside.memory.recall('tea')).toEqual([{ tier: 'cold', text: 'about tea', cites: ['D1:1'], score: 1 }]);
    await expect(outside.memory.commit([{ subject: 'a', predicate: 'likes', object: 'tea' }])).rejects.toMatchObject({
      code: 'CAPABILITY_WITHHELD',
    });
    expect(await inside.memory.commit([{ subject: 'a', predicate: 'likes', object: 'tea' }], 'a likes tea')).toEqual({
      relationIds: ['r0'],
    });
    expect(committed.map((c) => c.plugin)).toEqual(['inside']);
  });

  it('answers knowledge queries with the knowledge capability, and refuses without it', async () => {
    const { plugin } = await given();
    expect(await plugin('reader', ['knowledge'], true).knowledge.query('Ada')).toMatchObject([{ subject: 'Ada', predicate: 'lives_in' }]);
    await expect(plugin('nosy', ['tools'], true).knowledge.query('Ada')).rejects.toMatchObject({ code: 'CAPABILITY_WITHHELD' });
    await expect(plugin('bad', ['memory']).memory.commit([{ subject: '', predicate: 'x', object: 'y' }])).rejects.toMatchObject({
      code: 'REGISTRATION_REFUSED',
    });
  });
});
