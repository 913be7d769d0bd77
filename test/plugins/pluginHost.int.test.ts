/**
 * The plugin host with real subprocess plugins (test/fixtures/plugins/host/*): registrations
 * become events, crashes detach them and restart with backoff until the supervisor gives up,
 * garbage and withheld capabilities are answered and logged, a mute plugin times out, and a
 * plugin that dies behind a grandchild holding its stdout is still noticed.
 */
import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { TOOL_TIMEOUTS_BUDGET } from '../../plugins/host/callCharges.ts';
import { afterEach, describe, expect, it } from 'vitest';
import { createDefaultCatalog, InMemoryEventStore, PLUGIN_REGISTRY_STREAM, SequentialIds } from '../../events/index.ts';
import { systemClock, systemTimers } from '../../actors/clock/systemClock.ts';
import { PluginHost } from '../../plugins/host/pluginHost.ts';
import { replayPluginSupervisors } from '../../plugins/host/replaySupervisors.ts';
import { instanceOfTag, REPO, taggedProcessState } from '../support/processes.ts';
import { createManualTimers } from '../support/manualTimers.ts';
import { installPluginCopy } from '../support/pluginCopies.ts';
import { useTempDir } from '../support/tempDir.ts';

const FIXTURES = join(REPO, 'test/fixtures/plugins/host');
const tempDir = useTempDir();
const hosts: PluginHost[] = [];
afterEach(async () => {
  for (const host of hosts.splice(0)) await host.stop();
});

const startHost = async (plugins: string[], options: Partial<ConstructorParameters<typeof PluginHost>[0]> = {}) => {
  const dataDir = tempDir();
  const pluginsDir = join(dataDir, 'plugins');
  mkdirSync(pluginsDir);
  for (const name of plugins) symlinkSync(join(FIXTURES, name), join(pluginsDir, name));
  const store = new InMemoryEventStore(createDefaultCatalog(), systemClock, new SequentialIds());
  const lines: string[] = [];
  const failures: unknown[] = [];
  const host = new PluginHost({
    dataDir,
    store,
    clock: systemClock,
    ids: new SequentialIds(),
    timers: systemTimers,
    builtins: [],
    log: (line) => lines.push(line),
    fail: (error) => failures.push(error),
    ...options,
  });
  hosts.push(host);
  await host.start();
  const types = async () => (await store.readStream(PLUGIN_REGISTRY_STREAM)).map((e) => e.type);
  return { host, store, lines, failures, types };
};

const callInfo = { callId: 'c1', name: 'x' };

describe('plugin host', () => {
  it('records what a plugin registers and reaches its tool and stage handler', async () => {
    const { host, types, failures } = await startHost(['gatekeeper']);
    expect(host.supervisor('gatekeeper').state).toBe('running');
    expect(await types()).toEqual(['PluginLoaded', 'PluginProcessSpawned', 'PluginToolRegistered', 'PluginStageRegistered']);
    expect(await host.hub.callTool('lookup', { q: 'tea' }, { ...callInfo, name: 'lookup' })).toBe('looked up tea');
    const [handler] = host.hub.registry.handlers;
    const context = {
      input: 'hi',
      injected: [],
      llmText: null,
      toolCalls: [],
      toolCall: { id: 'c1', name: 'lookup', args: { q: 'secret' } },
      denial: null,
      toolResult: null,
      output: null,
      response: null,
    };
    expect(await host.hub.runStage(handler!.id, 'before_toolcall', context)).toEqual({ deny: { reason: 'secrets are not looked up' } });
    expect(host.list()[0]).toMatchObject({ name: 'gatekeeper', state: 'running', tools: ['lookup'], stages: ['before_toolcall'] });
    expect(failures).toEqual([]);
  });

  it("detaches a crashed plugin's registrations, restarts it with backoff and gives up on the 4th crash", async () => {
    const { host, store, types, lines } = await startHost(['crasher'], { supervisorConfig: { backoffMs: [20, 20, 20] } });
    await host.supervisor('crasher').until((s) => s === 'gaveUp');
    // Each crash, restart and the giving up are said, as the log holds them (a crash loop was silent: found by the hostile tester).
    expect(lines.filter((l) => /^plugin crasher: crashed \(exited with code \d+\)$/.test(l))).toHaveLength(4);
    expect(lines.filter((l) => /^plugin crasher: restarting in 0\.02 s \(attempt [123]\)$/.test(l))).toHaveLength(3);
    expect(lines).toContain(
      "plugin crasher: gave up after 4 crashes; 'homed plugins start crasher' tries again, 'homed log --type PluginCrashed' says why each ended",
    );
    const registry = await types();
    expect(registry.filter((t) => t === 'PluginToolRegistered')).toHaveLength(4);
    expect(registry.filter((t) => t === 'PluginRegistrationsDetached')).toHaveLength(4);
    expect(host.hub.registry.tools.has('crasher_ping')).toBe(false);
    const supervisorFacts = (await store.readAll()).filter((e) => e.stream.startsWith('plugin-crasher')).map((e) => e.type);
    expect(supervisorFacts.filter((t) => t === 'PluginCrashed')).toHaveLength(4);
    expect(supervisorFacts.filter((t) => t === 'PluginRestarting')).toHaveLength(3);
    expect(supervisorFacts.at(-1)).toBe('PluginGaveUp');
    expect(host.list()[0]).toMatchObject({ state: 'gaveUp', restarts: 3 });
    // Every restart decision replays from the journal, the backoff timers' firings included.
    const [replay] = await replayPluginSupervisors(store, { backoffMs: [20, 20, 20] });
    expect(replay).toMatchObject({ divergence: null });
    expect(replay!.messages).toBeGreaterThanOrEqual(12);
  });

  // A red-team plugin flooded requests and never read the answers: the daemon grew to 9 GB in two minutes.
  it('stops a plugin that floods requests and leaves the answers unread, records why, and holds no more than it may', async () => {
    const before = process.memoryUsage().rss;
    const { host, store } = await startHost(['hoarder'], { supervisorConfig: { backoffMs: [60_000, 60_000, 60_000] } });
    await expect.poll(async () => (await store.readAll({ types: ['PluginCrashed'] })).length, { timeout: 20_000 }).toBeGreaterThan(0);
    const crashed = (await store.readAll({ types: ['PluginCrashed'] }))[0]!.data as { error?: string };
    expect(crashed.error).toContain("it sent requests and left the kernel's answers unread");
    expect(host.supervisor('hoarder').state).not.toBe('running');
    // What it made the kernel hold: about the unread answers' bound, not gigabytes.
    expect((process.memoryUsage().rss - before) / 1_048_576, 'RSS grown (MB)').toBeLessThan(300);
  });

  it('answers garbage, unknown methods and withheld capabilities with errors, logs them, and keeps the plugin', async () => {
    const { host, store } = await startHost(['garbler']);
    await expect.poll(() => host.hub.registry.tools.has('garbler_outcomes')).toBe(true);
    expect(await host.hub.callTool('garbler_outcomes', {}, callInfo)).toBe(
      'kernel.format_disk: METHOD_NOT_FOUND\ninput.inject: CAPABILITY_WITHHELD\ngarbler_bad: REGISTRATION_REFUSED',
    );
    expect(host.hub.registry.tools.has('garbler_bad')).toBe(false);
    const complaints = (await store.readStream(PLUGIN_REGISTRY_STREAM))
      .filter((e) => e.type === 'PluginMisbehaved')
      .map((e) => (e.data as { code: string }).code);
    expect(complaints).toEqual(expect.arrayContaining(['MALFORMED_FRAME', 'UNKNOWN_MESSAGE_TYPE', 'METHOD_NOT_FOUND']));
    expect(host.supervisor('garbler').state).toBe('running');
  });

  it('stops a plugin that writes text to stdout at once, failing its pending call, records why, and restarts it', async () => {
    const { host, store } = await startHost(['babbler'], {
      remoteTimeouts: { toolMs: 60_000, stageMs: 60_000, deliverMs: 60_000 },
      supervisorConfig: { backoffMs: [20, 20, 20] },
    });
    const supervisor = host.supervisor('babbler');
    await expect(host.hub.callTool('babbler_talk', {}, callInfo)).rejects.toMatchObject({
      code: 'CONNECTION_CLOSED',
      message: expect.stringContaining('"DEBUG: babbler_talk called'),
    });
    await supervisor.until((s) => s === 'backoff' || s === 'starting');
    await supervisor.until((s) => s === 'running');
    const events = await store.readAll();
    expect(events.find((e) => e.type === 'PluginMisbehaved')?.data).toMatchObject({ plugin: 'babbler', code: 'FRAMING_LOST' });
    // Killed, or gone first on the bye and closed stdin: either way a crash with the reason.
    expect(events.find((e) => e.type === 'PluginCrashed')?.data).toMatchObject({
      plugin: 'babbler',
      error: expect.stringContaining('wrote bytes to stdout that are not frames'),
    });
    expect(host.hub.registry.tools.get('babbler_talk')?.plugin).toBe('babbler');
  });

  it.each([
    ['oldproto', /speaks plugin protocol 2, but this side speaks protocol 1; rebuild the plugin against protocol 1/],
    ['impostor', /said hello as 'files', but its manifest names it 'impostor'; make the two names the same/],
    ['noexec', /could not be started .*main\.sh.*EACCES.*check the manifest's entry and that the file is executable/],
  ])('stops %s at once on a start that no retry can fix, with what to fix, and does not restart it', async (name, why) => {
    const { host, store } = await startHost([name], { supervisorConfig: { backoffMs: [20, 20, 20] } });
    expect(host.supervisor(name).state).toBe('stopped');
    const facts = (await store.readAll()).filter((e) => e.stream.startsWith(`plugin-${name}`)).map((e) => e.type);
    expect(facts.filter((t) => t !== 'InputDelivered')).toEqual(['PluginStarting', 'PluginStopped']);
    const stopped = (await store.readAll()).find((e) => e.type === 'PluginStopped')!.data as { reason: string; error: string };
    expect(stopped.reason).toBe('refused');
    expect(stopped.error).toMatch(why);
    expect(stopped.error).toContain(`then run 'homed plugins start ${name}'`);
    expect(host.hub.registry.plugins.get(name)).toMatchObject({ state: 'stopped', lastError: stopped.error });
    const [replay] = await replayPluginSupervisors(store, { backoffMs: [20, 20, 20] });
    expect(replay).toMatchObject({ divergence: null });
  });

  it("fails a call the plugin never answers with a timeout, says so on homed's output, and the plugin stays up", async () => {
    const { host, lines } = await startHost(['mute'], { remoteTimeouts: { toolMs: 200, stageMs: 200, deliverMs: 200 } });
    await expect(host.hub.callTool('mute_wait', {}, callInfo)).rejects.toMatchObject({ code: 'REQUEST_TIMED_OUT' });
    expect(host.supervisor('mute').state).toBe('running');
    // A newcomer's hanging tool showed nothing for a minute, then an error only the model saw.
    expect(lines).toContain(
      `plugin mute: a call of tool 'mute_wait' got no answer within 0.2 s; ${TOOL_TIMEOUTS_BUDGET} such within 10 minutes detach its tools until it is started afresh`,
    );
  });

  it('takes the tools of a plugin whose calls keep timing out off the toolset; the plugin itself stays up', async () => {
    const { host } = await startHost(['mute'], { remoteTimeouts: { toolMs: 200, stageMs: 200, deliverMs: 200 } });
    for (let i = 0; i < TOOL_TIMEOUTS_BUDGET; i++) {
      await expect(host.hub.callTool('mute_wait', {}, callInfo)).rejects.toMatchObject({ code: 'REQUEST_TIMED_OUT' });
    }
    await expect.poll(() => host.hub.registry.tools.has('mute_wait')).toBe(false);
    expect(host.hub.registry.plugins.get('mute')?.toolsDetached).toContain('tool calls within 10 minutes got no answer in time');
    expect(host.supervisor('mute').state).toBe('running');
  });

  // A red team named a plugin 'innocent_ping': it took innocent's tool, and innocent was refused and recorded as misbehaving.
  it("refuses a plugin named in another's NAME_ prefix, and the other keeps its tools", async () => {
    const pluginsDir = tempDir();
    symlinkSync(join(FIXTURES, 'mute'), join(pluginsDir, 'mute'));
    installPluginCopy(join(pluginsDir, 'squatter'), 'mute', { name: 'mute_wait' });
    const { host, lines } = await startHost([], { pluginsDir });
    expect(host.supervisor('mute').state).toBe('running');
    expect(host.hub.registry.tools.get('mute_wait')?.plugin).toBe('mute');
    expect(host.hub.registry.refused).toEqual([
      {
        folder: 'squatter',
        reason: expect.stringContaining(
          "is named 'mute_wait', which begins with the plugin 'mute''s name and '_': tool and channel names so are 'mute''s; " +
            "rename it (e.g. 'mute-wait') and restart homed",
        ),
      },
    ]);
    expect(lines.join('\n')).toContain('plugin refused: ');
  });

  it('says, of a plugin that failed to start, what its stderr said: not only that its connection closed', async () => {
    // Made here, not kept among the fixtures: the linter and the type checker would refuse its syntax error.
    const pluginsDir = tempDir();
    const folder = join(pluginsDir, 'typo');
    mkdirSync(folder);
    writeFileSync(
      join(folder, 'plugin.json'),
      JSON.stringify({ name: 'typo', version: '1.0.0', entry: 'main.ts', capabilities: ['tools'] }),
    );
    writeFileSync(join(folder, 'package.json'), '{"type": "module"}');
    writeFileSync(join(folder, 'main.ts'), '// A first plugin with a syntax error.\nconst notes = ;\n');
    const { host, lines } = await startHost([], { pluginsDir });
    await expect.poll(() => lines.join('\n')).toMatch(/plugin typo: start failed: .*its stderr said: .*main\.ts:2:\d+: ERROR/);
    expect(host.list().find((p) => p.name === 'typo')?.lastError).toMatch(
      /^plugin 'typo' is not restarted until it is fixed: .*its stderr said: .*main\.ts:2:\d+: ERROR.*; then run 'homed plugins start typo'$/,
    );
    // Code that cannot load fails the same way at every start: stopped at once, not retried.
    expect(host.supervisor('typo').state).toBe('stopped');
    expect(lines.filter((line) => line.startsWith('plugin typo: start failed'))).toHaveLength(1);
    expect(lines.join('\n')).not.toContain('plugin typo: restarting');
  });

  it('keeps a plugin that prints with console.log running, and shows where its tool threw', async () => {
    const { host, lines } = await startHost(['careless']);
    expect(await host.hub.callTool('careless_chatty', {}, callInfo)).toBe('still here');
    await expect(host.hub.callTool('careless_buggy', {}, callInfo)).rejects.toThrow('oops, my bug');
    expect(await host.hub.callTool('careless_chatty', {}, callInfo)).toBe('still here');
    expect(host.supervisor('careless').state).toBe('running');
    await expect.poll(() => lines.join('\n')).toContain('plugin careless (stderr): loading my first plugin');
    await expect.poll(() => lines.join('\n')).toContain('plugin careless (stderr): debugging my first tool');
    await expect
      .poll(() => lines.join('\n'))
      .toContain("plugin careless (stderr): careless: tool 'careless_buggy' failed: Error: oops, my bug");
    // Its stack, to the line of main.ts that threw.
    await expect.poll(() => lines.join('\n')).toMatch(/plugin careless \(stderr\):\s+at .*careless\/main\.ts:\d+/);
  });

  it("times a plugin's requests on the host's timers, not the wall clock", async () => {
    const timers = createManualTimers();
    const { host } = await startHost(['mute'], { timers, remoteTimeouts: { toolMs: 200, stageMs: 200, deliverMs: 200 } });
    expect(host.supervisor('mute').state).toBe('running');
    // The handshake's timeouts were disarmed once it said ready: what is armed is the next look at its state folder and its disk.
    expect(timers.armed).toBe(2);
    let outcome: unknown;
    void host.hub.callTool('mute_wait', {}, callInfo).catch((error: unknown) => (outcome = error));
    await expect.poll(() => timers.armed).toBe(3);
    timers.advance(199);
    await new Promise((resolve) => setImmediate(resolve));
    expect(outcome).toBeUndefined();
    timers.advance(1);
    await expect.poll(() => outcome).toMatchObject({ code: 'REQUEST_TIMED_OUT' });
  });

  it('notices a plugin that dies while a grandchild holds its stdout, and kills the grandchild', async () => {
    const { host, lines, store } = await startHost(['forker']);
    await host.supervisor('forker').until((s) => s === 'stopped');
    const tag = lines.join('\n').match(/grandchild (\S+\/\d+)/)?.[1];
    // The tag names a start of this plugin, so 'gone' below is about its grandchild, not a tag that matches nothing.
    const starts = (await store.readAll({ types: ['PluginProcessSpawned'] })).map((e) => e.data.instance);
    expect(starts).toContain(instanceOfTag(tag!));
    await expect.poll(() => taggedProcessState(tag!)).toBe('gone');
  });

  it('runs a Lua script plugin in the sandbox: its tool answers, and a runaway call is an error result, not a crash', async () => {
    const { host, types } = await startHost(['luagreeter']);
    expect(host.supervisor('luagreeter').state).toBe('running');
    expect(await types()).toEqual(['PluginLoaded', 'PluginToolRegistered']);
    expect(await host.hub.callTool('greet', { who: 'Ada' }, callInfo)).toMatchObject({ content: 'hello Ada' });
    expect(await host.hub.callTool('greet', { who: 'loop' }, callInfo)).toMatchObject({ isError: true });
    expect(await host.hub.callTool('greet', { who: 'again' }, callInfo)).toMatchObject({ content: 'hello again' });
    expect(host.list()[0]).toMatchObject({ kind: 'lua', tools: ['greet'] });
  });
});
