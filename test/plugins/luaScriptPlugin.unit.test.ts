import { describe, expect, it } from 'vitest';
import { LuaPluginLoadFailed, startLuaPlugin } from '../../plugins/lua/luaScriptPlugin.ts';
import type { PluginApi, ToolHandler, ToolReply, ToolSpec } from '../../plugins/sdk/pluginApi.ts';

/** A PluginApi that records tools and log lines; everything else is refused. */
const fakeApi = (name = 'luademo') => {
  const tools = new Map<string, { spec: ToolSpec; handler: ToolHandler }>();
  const logs: string[] = [];
  const unsupported = () => Promise.reject(new Error('not in this fake'));
  const api: PluginApi = {
    name,
    registerTool: async (spec, handler) => {
      tools.set(spec.name, { spec, handler });
    },
    registerStage: unsupported,
    registerOutputChannel: unsupported,
    subscribe: unsupported,
    injectInput: unsupported,
    injectInterrupt: unsupported,
    setting: unsupported,
    memory: { recall: unsupported, commit: unsupported },
    knowledge: { query: unsupported },
    log: (line) => logs.push(line),
  };
  const call = async (tool: string, args: Record<string, unknown> = {}): Promise<ToolReply> => {
    const entry = tools.get(tool);
    if (entry === undefined) throw new Error(`no tool ${tool}`);
    return entry.handler(args, { callId: 'c1', name: tool });
  };
  return { api, tools, logs, call };
};

const GREET = `
plugin.register_tool({ name = "greet", description = "Greets",
  parameters = json.object({ type = "object", properties = json.object({ who = json.object({ type = "string" }) }) }) },
  function(args) return "hello " .. args.who end)
plugin.log("loaded")
`;

const startFailure = async (script: string, budget?: number): Promise<LuaPluginLoadFailed> => {
  const error = await startLuaPlugin(fakeApi().api, { name: 'luademo', script, instructionBudget: budget }).then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(LuaPluginLoadFailed);
  return error as LuaPluginLoadFailed;
};

describe('Lua script plugins', () => {
  it('registers the tools the script declares, and runs them', async () => {
    const { api, tools, logs, call } = fakeApi();
    const running = await startLuaPlugin(api, { name: 'luademo', script: GREET });

    expect(logs).toEqual(['loaded']);
    expect(tools.get('greet')?.spec).toEqual({
      name: 'greet',
      description: 'Greets',
      parameters: { type: 'object', properties: { who: { type: 'string' } } },
    });
    expect(await call('greet', { who: 'world' })).toEqual({ content: 'hello world' });
    await running.stop();
  });

  it('sends a table result as JSON and defaults the parameters schema', async () => {
    const { api, tools, call } = fakeApi();
    await startLuaPlugin(api, {
      name: 'luademo',
      script: `plugin.register_tool({ name = "pair", description = "A pair" }, function(args) return { n = args.n * 2, tags = json.array({ "a" }) } end)`,
    });
    expect(tools.get('pair')?.spec.parameters).toEqual({ type: 'object', properties: {} });
    expect(await call('pair', { n: 21 })).toEqual({ content: '{"n":42,"tags":["a"]}' });
  });

  it('gives the script no io, os, require, load or debug', async () => {
    const { api, call } = fakeApi();
    await startLuaPlugin(api, {
      name: 'luademo',
      script: `
        assert(io == nil and os == nil and require == nil, "sandbox leak at load")
        plugin.register_tool({ name = "probe", description = "Probe" }, function()
          return table.concat({ type(io), type(os), type(require), type(load), type(debug), type(package) }, ",")
        end)`,
    });
    expect(await call('probe')).toEqual({ content: 'nil,nil,nil,nil,nil,nil' });
  });

  it('turns a runaway tool into an error result, and the next call still works', async () => {
    const { api, logs, call } = fakeApi();
    await startLuaPlugin(api, {
      name: 'luademo',
      instructionBudget: 50_000,
      script: `
        plugin.register_tool({ name = "spin", description = "Spins" }, function() while true do end end)
        plugin.register_tool({ name = "ok", description = "Fine" }, function() return "fine" end)`,
    });

    const reply = await call('spin');
    expect(reply).toEqual({ content: expect.stringContaining("tool 'spin' of Lua plugin 'luademo' failed"), isError: true });
    expect(JSON.stringify(reply)).toContain('more than 50000 Lua instructions');
    expect(logs.some((line) => line.includes("tool 'spin'"))).toBe(true);
    expect(await call('ok')).toEqual({ content: 'fine' });
    expect(await call('spin')).toMatchObject({ isError: true });
  });

  it('stops a memory bomb with an error naming the plugin and its limit; the plugin stays up and what it built is released', async () => {
    const { api, logs, call } = fakeApi();
    await startLuaPlugin(api, {
      name: 'luademo',
      script: `
        calls = 0
        plugin.register_tool({ name = "bomb", description = "Doubles a string forty times" }, function()
          calls = calls + 1
          s = 'x'; for i = 1, 40 do s = s .. s end
        end)
        plugin.register_tool({ name = "state", description = "What the script holds" }, function()
          calls = calls + 1
          return { calls = calls, held = s and #s or 0 }
        end)`,
    });
    expect(await call('state')).toEqual({ content: '{"calls":1,"held":0}' });
    for (let i = 0; i < 3; i++) {
      expect(await call('bomb')).toEqual({
        content: expect.stringMatching(
          /^tool 'bomb' of Lua plugin 'luademo' failed: Lua plugin 'luademo' used more than 64 MB .*the script reloaded/,
        ),
        isError: true,
      });
      // The state is the script's fresh one: no 32 MB string kept, the counter started again.
      expect(await call('state')).toEqual({ content: '{"calls":1,"held":0}' });
    }
    expect(logs.filter((line) => line.includes('used more than 64 MB'))).toHaveLength(3);
  });

  it('takes the memory limit from its options', async () => {
    const { api, call } = fakeApi();
    await startLuaPlugin(api, {
      name: 'luademo',
      memoryLimitBytes: 8 * 1024 * 1024,
      script: `plugin.register_tool({ name = "big", description = "Builds 10 MB" }, function() return #string.rep('x', 10 * 1024 * 1024) end)`,
    });
    expect(await call('big')).toMatchObject({ isError: true, content: expect.stringContaining('used more than 8 MB') });
  });

  it('reloads the script after a runaway call too, so a half-done update is not kept', async () => {
    const { api, call } = fakeApi();
    await startLuaPlugin(api, {
      name: 'luademo',
      instructionBudget: 50_000,
      script: `
        items = {}
        plugin.register_tool({ name = "half", description = "Adds, then spins" }, function() items[#items + 1] = 1 while true do end end)
        plugin.register_tool({ name = "count", description = "Counts" }, function() return #items end)`,
    });
    expect(await call('half')).toMatchObject({ isError: true });
    expect(await call('count')).toEqual({ content: '0' });
  });

  it('stops a call at its wall-clock limit, says which limit to raise, and reloads the script', async () => {
    const { api, call } = fakeApi();
    await startLuaPlugin(api, {
      name: 'luademo',
      instructionBudget: 1_000_000_000,
      timeLimitMs: 10,
      script: `
        items = {}
        plugin.register_tool({ name = "slow", description = "Adds, then spins" }, function() items[#items + 1] = 1 while true do end end)
        plugin.register_tool({ name = "count", description = "Counts" }, function() return #items end)`,
    });
    expect(await call('slow')).toEqual({
      isError: true,
      content: expect.stringContaining(`tool 'slow' ran for more than 10 ms: do less per call, or raise "limits": {"time_ms": ...}`),
    });
    expect(await call('count')).toEqual({ content: '0' });
  });

  it('turns a Lua error in a tool into an error result naming the line', async () => {
    const { api, call } = fakeApi();
    await startLuaPlugin(api, {
      name: 'luademo',
      script: `plugin.register_tool({ name = "boom", description = "Fails" }, function(args)\n  error("no such city: " .. args.city)\nend)`,
    });
    expect(await call('boom', { city: 'Atlantis' })).toEqual({
      content: expect.stringContaining('luademo:2: no such city: Atlantis'),
      isError: true,
    });
  });

  it('refuses to register tools after the script loaded', async () => {
    const { api, call } = fakeApi();
    await startLuaPlugin(api, {
      name: 'luademo',
      script: `plugin.register_tool({ name = "late", description = "Late" }, function()
        plugin.register_tool({ name = "later", description = "x" }, function() end)
      end)`,
    });
    expect(await call('late')).toEqual({ content: expect.stringContaining('only be registered while the script loads'), isError: true });
  });

  it('rejects start with the plugin name and the Lua message on a syntax error', async () => {
    const error = await startFailure('plugin.register_tool({ name = "x" ');
    expect(error.code).toBe('LUA_PLUGIN_LOAD_FAILED');
    expect(error.message).toContain("Lua plugin 'luademo' failed to load");
    expect(error.message).toMatch(/luademo:1: .*expected/);
  });

  it('keeps the script line numbers in load errors', async () => {
    const error = await startFailure('local x = 1\n\nerror("bad config")');
    expect(error.message).toContain('luademo:3: bad config');
  });

  it('rejects start when the top level runs out of budget', async () => {
    const error = await startFailure('while true do end', 10_000);
    expect(error.message).toContain('the top level of the script ran more than 10000 Lua instructions');
  });

  it('rejects start on bad tool specs, listing every problem', async () => {
    const error = await startFailure(`
      plugin.register_tool({ name = "bad name!", description = "x" }, function() end)
      plugin.register_tool({ name = "nodesc", paramters = json.object({}) }, function() end)
      plugin.register_tool({ name = "arr", description = "x", parameters = json.array({}) }, function() end)`);
    expect(error.message).toContain("tool 'bad name!': the name must be");
    expect(error.message).toContain("tool 'nodesc': give it a description");
    expect(error.message).toContain("tool 'nodesc': unknown spec key 'paramters'");
    expect(error.message).toContain("tool 'arr': parameters must be a JSON-Schema table");
  });

  it('rejects start when register_tool gets no function, or a name twice', async () => {
    expect((await startFailure('plugin.register_tool({ name = "x", description = "x" }, "nope")')).message).toContain('luademo:1:');
    expect((await startFailure(GREET + GREET)).message).toContain("tool 'greet' is registered twice");
  });

  it('answers calls after stop with an error result', async () => {
    const { api, call } = fakeApi();
    const running = await startLuaPlugin(api, { name: 'luademo', script: GREET });
    await running.stop();
    await running.stop();
    expect(await call('greet', { who: 'x' })).toEqual({ content: expect.stringContaining('is stopped'), isError: true });
  });
});
