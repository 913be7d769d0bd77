/**
 * Lua script plugins: `main.lua` runs once in the sandboxed VM (see adapters/llm/luaVm.ts), the
 * tools it registers go to the kernel, and each call runs under the instruction budget.
 * Invariant: after a successful start nothing the script does can throw into the kernel; a Lua
 * error or a runaway loop comes back as a tool result marked `isError`.
 *
 * In Lua the script sees, besides the VM's built-ins (`json`, `log`, `print`):
 * - `plugin.register_tool({ name, description, parameters }, function(args) ... end)`: only
 *   while the script loads; `parameters` is a JSON-Schema table (use `json.object`), default
 *   an object schema without properties. The function returns a string, or a table sent as JSON.
 * - `plugin.log(...)`: a line for the daemon's log.
 */
import { DEFAULT_INSTRUCTION_BUDGET, LuaVm, type LuaLogLevel } from '../../actors/index.ts';
import { isLuaAdapterError, type LuaAdapterError } from '../../actors/index.ts';
import { HologramError } from '../../events/index.ts';
import type { RunningPlugin } from '../sdk/builtinPlugin.ts';
import type { PluginApi, ToolReply, ToolSpec } from '../sdk/pluginApi.ts';

/** The Lua plugin's script did not load: a syntax error, a runtime error or runaway loop at its top level, or a bad tool spec. */
export class LuaPluginLoadFailed extends HologramError {
  readonly code = 'LUA_PLUGIN_LOAD_FAILED';
  constructor(
    readonly plugin: string,
    /** The Lua message, or the problems with the registered tools. */
    readonly detail: string,
    options?: { cause?: unknown },
  ) {
    super(`Lua plugin '${plugin}' failed to load: ${detail}; fix the script and reload the plugin`, options);
  }
}

export type LuaPluginOptions = Readonly<{
  name: string;
  script: string;
  /** Lua instructions allowed for loading the script and for each tool call. Default 2,000,000. */
  instructionBudget?: number;
}>;

const CALL_TOOL = '__hologram_call_tool';
const TAKE_SPECS = '__hologram_take_specs';

/**
 * Defines `plugin` in the script's chunk. One line, so the script's line numbers in Lua error
 * messages stay right; `do ... end` keeps its locals away from the script.
 */
const PRELUDE = [
  'do local tools, specs, sealed = {}, {}, false',
  'plugin = {}',
  'function plugin.register_tool(spec, fn)',
  ' if sealed then error("plugin.register_tool: tools can only be registered while the script loads", 2) end',
  ' if type(spec) ~= "table" or type(spec.name) ~= "string" then error("plugin.register_tool: the first argument must be a table { name = \\"...\\", description = \\"...\\", parameters = json.object({...}) }", 2) end',
  ' if type(fn) ~= "function" then error("plugin.register_tool(\'" .. spec.name .. "\'): the second argument must be a function(args)", 2) end',
  ' if tools[spec.name] then error("plugin.register_tool: tool \'" .. spec.name .. "\' is registered twice", 2) end',
  ' tools[spec.name] = fn; specs[#specs + 1] = spec',
  'end',
  'function plugin.log(...) print(...) end',
  `function ${CALL_TOOL}(name, args) return tools[name](args) end`,
  `function ${TAKE_SPECS}() sealed = true; return json.array(specs) end`,
  'end ',
].join(' ');

const TOOL_NAME = /^[A-Za-z0-9_-]{1,64}$/;
const SPEC_KEYS = ['name', 'description', 'parameters'];

/**
 * Loads the script and registers its tools with the kernel.
 *
 * @throws LuaPluginLoadFailed when the script does not load or registers a bad tool spec.
 * @example
 * const running = await startLuaPlugin(api, { name: 'luademo', script: readFileSync('main.lua', 'utf8') });
 */
export async function startLuaPlugin(api: PluginApi, options: LuaPluginOptions): Promise<RunningPlugin> {
  const { name } = options;
  const budget = options.instructionBudget ?? DEFAULT_INSTRUCTION_BUDGET;
  const log = (level: LuaLogLevel, message: string): void => api.log(level === 'info' ? message : `[${level}] ${message}`);

  let vm: LuaVm;
  let specs: ToolSpec[];
  try {
    vm = new LuaVm({ name, script: PRELUDE + options.script, instructionBudget: budget, log });
  } catch (error) {
    throw new LuaPluginLoadFailed(name, luaDetail(error, budget, 'the top level of the script'), { cause: error });
  }
  try {
    specs = checkSpecs(name, vm.call(TAKE_SPECS));
  } catch (error) {
    vm.close();
    if (error instanceof LuaPluginLoadFailed) throw error;
    throw new LuaPluginLoadFailed(name, luaDetail(error, budget, 'the registered tool specs'), { cause: error });
  }

  let stopped = false;
  const callTool = (tool: string, args: Readonly<Record<string, unknown>>): ToolReply => {
    if (stopped) return { content: `Lua plugin '${name}' is stopped; tool '${tool}' cannot run`, isError: true };
    try {
      return { content: replyText(vm.call(CALL_TOOL, tool, args)) };
    } catch (error) {
      const content = `tool '${tool}' of Lua plugin '${name}' failed: ${luaDetail(error, budget, `tool '${tool}'`)}`;
      try {
        log('warn', content);
      } catch {
        // a failing log sink must not turn a tool failure into a kernel failure
      }
      return { content, isError: true };
    }
  };

  try {
    for (const spec of specs) await api.registerTool(spec, (args) => callTool(spec.name, args));
  } catch (error) {
    stopped = true;
    vm.close();
    throw error;
  }
  return {
    stop: async () => {
      if (stopped) return;
      stopped = true;
      vm.close();
    },
  };
}

/** The specs as the script registered them, or LuaPluginLoadFailed listing every problem. */
function checkSpecs(plugin: string, raw: unknown): ToolSpec[] {
  const problems: string[] = [];
  const specs: ToolSpec[] = [];
  for (const item of Array.isArray(raw) ? raw : []) {
    const spec = item as Record<string, unknown>;
    const label = `tool '${String(spec.name)}'`;
    for (const key of Object.keys(spec)) {
      if (!SPEC_KEYS.includes(key)) problems.push(`${label}: unknown spec key '${key}' (known: ${SPEC_KEYS.join(', ')})`);
    }
    if (typeof spec.name !== 'string' || !TOOL_NAME.test(spec.name)) {
      problems.push(`${label}: the name must be 1–64 letters, digits, '_' or '-'`);
    }
    if (typeof spec.description !== 'string' || spec.description.trim() === '') {
      problems.push(`${label}: give it a description (a non-empty string telling the model what it does)`);
    }
    const parameters = spec.parameters ?? { type: 'object', properties: {} };
    if (typeof parameters !== 'object' || parameters === null || Array.isArray(parameters)) {
      problems.push(
        `${label}: parameters must be a JSON-Schema table, e.g. json.object({ type = "object", properties = json.object({}) })`,
      );
    }
    specs.push({ name: String(spec.name), description: String(spec.description), parameters: parameters as ToolSpec['parameters'] });
  }
  if (problems.length > 0) throw new LuaPluginLoadFailed(plugin, problems.join('; '));
  return specs;
}

/** What a tool's Lua function returned, as text for the model. */
function replyText(result: unknown): string {
  if (result === undefined || result === null) return '';
  if (typeof result === 'string') return result;
  return JSON.stringify(result);
}

/** The Lua side of a failure, worded for a plugin author (LuaAdapterError speaks of adapters). */
function luaDetail(error: unknown, budget: number, what: string): string {
  if (!isLuaAdapterError(error)) return error instanceof Error ? error.message : String(error);
  const e: LuaAdapterError = error;
  switch (e.code) {
    case 'LUA_BUDGET_EXCEEDED':
      return `${what} ran more than ${budget} Lua instructions (an endless loop?)`;
    case 'LUA_VALUE_NOT_JSON':
      return `a value that cannot be sent as JSON: ${e.detail}`;
    default:
      return e.detail;
  }
}
