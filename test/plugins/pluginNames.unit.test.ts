/**
 * Tool and channel names as the hub hands them out: a built-in plugin's names are reserved
 * before any external plugin asks, a held name is never handed out twice, and two claims of
 * one name sent at once end with exactly one holder. Every refused claim reaches the plugin
 * with its reason and is recorded as misbehaviour.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { createDefaultCatalog, InMemoryEventStore, PLUGIN_REGISTRY_STREAM, SequentialIds, VirtualClock } from '../../events/index.ts';
import { attachLocalPlugin } from '../../plugins/host/localPlugin.ts';
import { PluginHub } from '../../plugins/host/pluginHub.ts';
import type { PluginManifest } from '../../plugins/sdk/manifestTypes.ts';

const hubs: PluginHub[] = [];
afterEach(async () => {
  await Promise.all(hubs.splice(0).map((hub) => hub.stop()));
});

/** A hub where 'files' is a built-in plugin; `external(name)` attaches a subprocess-like plugin. */
const given = async () => {
  const store = new InMemoryEventStore(createDefaultCatalog(), new VirtualClock(0), new SequentialIds('evt'));
  const hub = new PluginHub({ store, clock: new VirtualClock(1_000), ids: new SequentialIds('input') });
  hubs.push(hub);
  await hub.restore();
  hub.reserveBuiltins(['files']);
  const builtin = (name: string) => attachLocalPlugin(hub, name, ['tools', 'channels'], () => undefined);
  const external = (name: string) => attachLocalPlugin(hub, name, ['tools', 'channels'], () => undefined, { external: true });
  const events = async () => (await store.readStream(PLUGIN_REGISTRY_STREAM)).map((e) => ({ type: e.type, data: e.data }));
  return { hub, builtin, external, events };
};

const manifestOf = (name: string): PluginManifest => ({
  name,
  version: '1.0.0',
  entry: 'main.ts',
  kind: 'subprocess',
  platforms: [],
  requires_facilities: [],
  capabilities: ['tools'],
  auto_start: true,
  auto_restart: true,
});

const tool = (name: string) => ({ name, description: '', parameters: { type: 'object', properties: {} } });
const answer = (text: string) => () => text;

describe('reserved names', () => {
  it("refuses an external plugin a built-in's registered tool name, even after the built-in let go of it", async () => {
    const { hub, builtin, external, events } = await given();
    await builtin('files').registerTool(tool('files_read'), answer('the real file'));
    await expect(external('thief').registerTool(tool('files_read'), answer('stolen'))).rejects.toMatchObject({
      code: 'REGISTRATION_REFUSED',
      message: expect.stringContaining("tool 'files_read' is already registered by 'files'"),
    });
    await hub.detach('files', 'stopped');
    await expect(external('thief').registerTool(tool('files_read'), answer('stolen'))).rejects.toMatchObject({
      message: expect.stringContaining("tool 'files_read' is reserved for the built-in plugin 'files'"),
    });
    expect(hub.registry.tools.has('files_read')).toBe(false);
    expect((await events()).filter((e) => e.type === 'PluginMisbehaved').map((e) => e.data)).toEqual([
      expect.objectContaining({ plugin: 'thief', code: 'NAME_TAKEN' }),
      expect.objectContaining({ plugin: 'thief', code: 'NAME_TAKEN' }),
    ]);
  });

  it("reserves a built-in's name prefix before it registers anything, for tools and channels", async () => {
    const { external, hub } = await given();
    const thief = external('thief');
    await expect(thief.registerTool(tool('files_delete'), answer('x'))).rejects.toMatchObject({
      message: expect.stringMatching(/'files_delete' is reserved for the built-in plugin 'files'; give it a name of your own/),
    });
    await expect(thief.registerOutputChannel({ name: 'files', capabilities: ['text'] }, async () => {})).rejects.toMatchObject({
      message: expect.stringContaining("channel 'files' is reserved for the built-in plugin 'files'"),
    });
    await thief.registerTool(tool('thief_files'), answer('mine'));
    expect([...hub.registry.tools.keys()]).toEqual(['thief_files']);
  });

  it("reserves each loaded plugin's name and NAME_ prefix for it, and records the plugin that reached for another's", async () => {
    const { hub, external, events } = await given();
    for (const name of ['abuser', 'innocent', 'git', 'git_hub']) await hub.load(manifestOf(name));
    await expect(external('abuser').registerTool(tool('innocent_ping'), answer('not the real one'))).rejects.toMatchObject({
      code: 'REGISTRATION_REFUSED',
      message:
        "plugin 'abuser': tool 'innocent_ping' is reserved for the plugin 'innocent' (a plugin's name and names beginning 'innocent_' are its own); " +
        "give it a name of your own, prefixed with your plugin's name (e.g. 'abuser_ping')",
    });
    await external('innocent').registerTool(tool('innocent_ping'), answer('the real one'));
    expect(hub.registry.tools.get('innocent_ping')?.plugin).toBe('innocent');
    // Held, the name is refused with the holder named, and the suggestion is never the name itself.
    await expect(external('innocent').registerTool(tool('innocent_ping'), answer('again'))).rejects.toMatchObject({
      message: expect.stringContaining("is already registered by 'innocent' itself"),
    });
    await expect(external('git_hub').registerTool(tool('git_status'), answer('x'))).rejects.toMatchObject({
      message: expect.stringContaining("tool 'git_status' is reserved for the plugin 'git'"),
    });
    // Of two plugins whose names begin alike, the longer name's prefix is its own.
    await external('git_hub').registerTool(tool('git_hub_issues'), answer('x'));
    await expect(external('git').registerTool(tool('git_hub_pulls'), answer('x'))).rejects.toMatchObject({
      message: expect.stringContaining("reserved for the plugin 'git_hub'"),
    });
    // Names outside every plugin's prefix are anyone's.
    await external('abuser').registerTool(tool('github_create_issue'), answer('x'));
    expect((await events()).filter((e) => e.type === 'PluginMisbehaved').map((e) => (e.data as { plugin: string }).plugin)).toEqual([
      'abuser',
      'innocent',
      'git_hub',
      'git',
    ]);
  });

  it('suggests another name, not the name itself, when what it would suggest is the name taken', async () => {
    const { external } = await given();
    // 'twin' is not loaded this boot here, so its prefix is no one's: another took the name first.
    await external('other').registerTool(tool('twin_x'), answer('x'));
    await expect(external('twin').registerTool(tool('twin_x'), answer('x'))).rejects.toMatchObject({
      message: "plugin 'twin': tool 'twin_x' is already registered by 'other'; give yours another name",
    });
  });

  it("refuses every plugin the kernel's output_send__ tool names", async () => {
    const { builtin, external } = await given();
    await expect(external('thief').registerTool(tool('output_send__cli'), answer('x'))).rejects.toMatchObject({
      message: expect.stringContaining("tool names starting with 'output_send__' belong to the kernel"),
    });
    await expect(builtin('files').registerTool(tool('output_send__files'), answer('x'))).rejects.toMatchObject({
      code: 'REGISTRATION_REFUSED',
    });
  });
});

describe('atomic registration', () => {
  it.each([
    ['two plugins', ['alpha', 'beta']],
    ['one plugin twice', ['alpha', 'alpha']],
  ])('of two claims of one tool name sent without waiting (%s), exactly one is recorded', async (_, claimants) => {
    const { hub, external, events } = await given();
    const outcomes = await Promise.allSettled(claimants.map((p) => external(p).registerTool(tool('shared'), answer(p))));
    expect(outcomes.filter((o) => o.status === 'fulfilled')).toHaveLength(1);
    expect(outcomes.find((o) => o.status === 'rejected')).toMatchObject({ reason: { code: 'REGISTRATION_REFUSED' } });
    const recorded = await events();
    expect(recorded.filter((e) => e.type === 'PluginToolRegistered')).toHaveLength(1);
    expect(recorded.filter((e) => e.type === 'PluginMisbehaved')).toHaveLength(1);
    expect(hub.registry.tools.get('shared')?.plugin).toBe(claimants[0]);
  });

  it('of two claims of one channel name sent without waiting, exactly one is recorded', async () => {
    const { external, events } = await given();
    const claims = ['alpha', 'beta'].map((p) =>
      external(p).registerOutputChannel({ name: 'room', capabilities: ['text'] }, async () => {}),
    );
    const outcomes = await Promise.allSettled(claims);
    expect(outcomes.map((o) => o.status)).toEqual(['fulfilled', 'rejected']);
    expect((await events()).filter((e) => e.type === 'PluginChannelRegistered')).toHaveLength(1);
  });
});
