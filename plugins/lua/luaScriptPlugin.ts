/**
 * Lua script plugins: `main.lua` runs once in the sandboxed VM (see adapters/llm/luaVm.ts), the
 * tools it registers go to the kernel, and each call runs under the instruction budget and the
 * plugin's memory ceiling. Invariant: after a successful start nothing the script does can throw
 * into the kernel; a Lua error, a runaway loop or a memory bomb comes back as a tool result
 * marked `isError`. A call stopped by a limit also reloads the script into a fresh VM, so what
 * it built is released and the next call starts from a consistent state.
 *
 * In Lua the script sees, besides the VM's built-ins (`json`, `log`, `print`):
 * - `plugin.register_tool({ name, description, parameters }, function(args) ... end)`: only
 *   while the script loads; `parameters` is a JSON-Schema table (use `json.object`), default
 *   an object schema without properties. The function returns a string, or a table sent as JSON.
 * - `plugin.log(...)`: a line for the daemon's log.
 */
import {
  DEFAULT_INSTRUCTION_BUDGET,
  DEFAULT_MEMORY_LIMIT_BYTES,
  DEFAULT_TIME_LIMIT_MS,
  LuaVm,
  type LuaLogLevel,
} from '../../actors/index.ts';
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
  /** Bytes the plugin's VM may hold (estimated). Default 64 MiB. */
  memoryLimitBytes?: number;
  /** Wall-clock milliseconds for loading the script and for each tool call. Default 5,000. */
  timeLimitMs?: number;
  /** Makes a log line or an error cut short safe to show (the host's scrub of a cut line); see LuaVmOptions.cutShort. */
  cutShort?: (text: string) => string;
}>;

type Limits = Readonly<{ budget: number; memoryLimitBytes: number; timeLimitMs: number }>;

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
  const limits: Limits = {
    budget: options.instructionBudget ?? DEFAULT_INSTRUCTION_BUDGET,
    memoryLimitBytes: options.memoryLimitBytes ?? DEFAULT_MEMORY_LIMIT_BYTES,
    timeLimitMs: options.timeLimitMs ?? DEFAULT_TIME_LIMIT_MS,
  };
  const log = (level: LuaLogLevel, message: string): void => api.log(level === 'info' ? message : `[${level}] ${message}`);
  const safeLog = (level: LuaLogLevel, message: string): void => {
    try {
      log(level, message);
    } catch {
      // a failing log sink must not turn a tool failure into a kernel failure
    }
  };

  let vm: LuaVm;
  let specs: ToolSpec[];
  try {
    vm = new LuaVm({
      name,
      script: PRELUDE + options.script,
      instructionBudget: limits.budget,
      memoryLimitBytes: limits.memoryLimitBytes,
      timeLimitMs: limits.timeLimitMs,
      log,
      ...(options.cutShort ? { cutShort: options.cutShort } : {}),
    });
  } catch (error) {
    throw new LuaPluginLoadFailed(name, luaDetail(name, error, limits, 'the top level of the script'), { cause: error });
  }
  try {
    specs = checkSpecs(name, vm.call(TAKE_SPECS));
  } catch (error) {
    vm.close();
    if (error instanceof LuaPluginLoadFailed) throw error;
    throw new LuaPluginLoadFailed(name, luaDetail(name, error, limits, 'the registered tool specs'), { cause: error });
  }

  let stopped = false;
  /** After a call a limit stopped: a fresh VM from the script, or the plugin stops when the script no longer loads the same. */
  const reload = (): void => {
    try {
      vm.reset();
      const again = checkSpecs(name, vm.call(TAKE_SPECS)).map((spec) => spec.name);
      if (again.join('\n') === specs.map((spec) => spec.name).join('\n')) return;
      throw new Error(`it now registers ${again.join(', ') || 'no tools'} instead of ${specs.map((spec) => spec.name).join(', ')}`);
    } catch (error) {
      stopped = true;
      safeLog('error', `Lua plugin '${name}' stopped: reloading its script after a limit failed: ${(error as Error).message}`);
    }
  };
  const callTool = (tool: string, args: Readonly<Record<string, unknown>>): ToolReply => {
    if (stopped) return { content: `Lua plugin '${name}' is stopped; tool '${tool}' cannot run`, isError: true };
    try {
      return { content: replyText(vm.call(CALL_TOOL, tool, args)) };
    } catch (error) {
      const limited = isLimitError(error);
      const content =
        `tool '${tool}' of Lua plugin '${name}' failed: ${luaDetail(name, error, limits, `tool '${tool}'`)}` +
        (limited ? '; the call was stopped and the script reloaded, so what it had built is gone' : '');
      safeLog('warn', content);
      if (limited) reload();
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

const isLimitError = (error: unknown): boolean =>
  isLuaAdapterError(error) &&
  (error.code === 'LUA_MEMORY_EXCEEDED' || error.code === 'LUA_BUDGET_EXCEEDED' || error.code === 'LUA_TIME_EXCEEDED');

const megabytes = (bytes: number): string => `${Math.round(bytes / (1024 * 1024))} MB`;

/** The Lua side of a failure, worded for a plugin author (LuaAdapterError speaks of adapters). */
function luaDetail(plugin: string, error: unknown, limits: Limits, what: string): string {
  if (!isLuaAdapterError(error)) return error instanceof Error ? error.message : String(error);
  const e: LuaAdapterError = error;
  switch (e.code) {
    case 'LUA_BUDGET_EXCEEDED':
      return `${what} ran more than ${limits.budget} Lua instructions (an endless loop?)`;
    case 'LUA_TIME_EXCEEDED':
      return `${what} ran for more than ${limits.timeLimitMs} ms: do less per call, or raise "limits": {"time_ms": ...} in its plugin.json`;
    case 'LUA_MEMORY_EXCEEDED':
      return (
        `Lua plugin '${plugin}' used more than ${megabytes(limits.memoryLimitBytes)} of memory in ${what}: build less, ` +
        `or raise "limits": {"memory_mb": ...} in its plugin.json`
      );
    case 'LUA_VALUE_NOT_JSON':
      return `a value that cannot be sent as JSON: ${e.detail}`;
    default:
      return e.detail;
  }
}
