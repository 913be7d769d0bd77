/**
 * A sandboxed Lua 5.3 VM (fengari) for adapter scripts. Invariant: a script can touch nothing
 * but its inputs and the built-ins below (no io, os, require, load, debug, package, coroutine),
 * every call runs under an instruction budget and a wall-clock limit, and the VM under a memory
 * ceiling (luaMeter/), so a script can neither reach the host, nor hang it, nor take its memory.
 *
 * Built-ins: `json.encode(v)`, `json.decode(s)`, `json.array(t?)`, `json.object(t?)`, `json.null`
 * (see luaJson.ts for the mapping rules), `json.present(v)` (v, or nil for json.null),
 * `bearer(config, headers)` (adds `Authorization: Bearer <config.apiKey>` when a key is set),
 * `log(level, msg)`; `print(...)` logs at 'info'.
 */
import { quotedPart } from './quotedPart.ts';
import { lauxlib, lua, lualib, to_jsstring, to_luastring, type LuaCFunction, type LuaState } from 'fengari';
import { JsonBoundaryError, JsonBudget, pushJs, toJs, type JsonMarkers } from './luaJson.ts';
import { LuaAdapterError } from './luaAdapterError.ts';
import { BUFFER_FACTOR, jsValueBytes, LuaMeter, meterStringLibrary, meterTableLibrary, SIZES } from './luaMeter/index.ts';

export type LuaLogLevel = 'debug' | 'info' | 'warn' | 'error';
export type LuaLogSink = (level: LuaLogLevel, message: string, adapter: string) => void;

export type LuaVmOptions = Readonly<{
  /** Names the VM in errors and logs (the adapter name). */
  name: string;
  script: string;
  /** Lua VM instructions allowed per call (and for loading the script). Default 2,000,000. */
  instructionBudget?: number;
  /** Bytes the VM may hold (estimated, see luaMeter/heapSize.ts). Default 64 MiB. */
  memoryLimitBytes?: number;
  /** Wall-clock milliseconds per call (and for loading the script). Default 5,000. */
  timeLimitMs?: number;
  /** The clock of the time limit (tests inject one). */
  now?: () => number;
  log?: LuaLogSink;
  /**
   * Makes a text cut short at MAX_LOG_MESSAGE_BYTES safe to show (the caller's secret scrub, which drops an end
   * that could begin a value): once cut, no later scrub would know that end for part of one.
   */
  cutShort?: (text: string) => string;
}>;

export const DEFAULT_INSTRUCTION_BUDGET = 2_000_000;
export const DEFAULT_MEMORY_LIMIT_BYTES = 64 * 1024 * 1024;
export const DEFAULT_TIME_LIMIT_MS = 5_000;
/** A log line from a script is cut here, so a script cannot flood the daemon's log with one call. */
export const MAX_LOG_MESSAGE_BYTES = 8 * 1024;

const REMOVED_GLOBALS = [
  'io',
  'os',
  'require',
  'dofile',
  'loadfile',
  'load',
  'loadstring',
  'debug',
  'package',
  'coroutine',
  'collectgarbage',
];
const LOG_LEVELS: readonly string[] = ['debug', 'info', 'warn', 'error'];

const PRELUDE = `
local array_mt = { __name = "json.array" }
local object_mt = { __name = "json.object" }
local null = setmetatable({}, { __name = "json.null", __tostring = function() return "json.null" end,
  __newindex = function() error("json.null is immutable", 2) end })
json = { null = null }
function json.array(t) return setmetatable(t or {}, array_mt) end
function json.object(t) return setmetatable(t or {}, object_mt) end
function json.present(v) if v == null then return nil end return v end
function bearer(config, h)
  if config.apiKey and config.apiKey ~= "" then h["Authorization"] = "Bearer " .. config.apiKey end
  return h
end
return array_mt, object_mt, null
`;

export class LuaVm {
  readonly name: string;
  readonly memoryLimitBytes: number;
  readonly timeLimitMs: number;
  private readonly now: (() => number) | undefined;
  private readonly script: string;
  private readonly budget: number;
  private readonly logSink: LuaLogSink;
  private readonly cutShort: (text: string) => string;
  private L!: LuaState;
  private markers!: JsonMarkers;
  private meter!: LuaMeter;

  constructor(options: LuaVmOptions) {
    this.name = options.name;
    this.script = options.script;
    this.budget = options.instructionBudget ?? DEFAULT_INSTRUCTION_BUDGET;
    this.memoryLimitBytes = options.memoryLimitBytes ?? DEFAULT_MEMORY_LIMIT_BYTES;
    this.timeLimitMs = options.timeLimitMs ?? DEFAULT_TIME_LIMIT_MS;
    this.now = options.now;
    this.logSink = options.log ?? (() => {});
    this.cutShort = options.cutShort ?? ((text) => text);
    this.build();
  }

  /**
   * Drops the state and loads the script into a fresh one: everything the script built is
   * released (it is unreachable, so JS's collector frees it). For after a call that ran into a
   * limit, which may have left the script's state half-updated.
   */
  reset(): void {
    lua.lua_close(this.L);
    this.build();
  }

  /** What the VM holds now, in estimated bytes (walks its heap). */
  heapBytes(): number {
    return this.meter.remeasure();
  }

  private build(): void {
    this.L = lauxlib.luaL_newstate();
    this.meter = new LuaMeter(this.L, {
      memoryLimitBytes: this.memoryLimitBytes,
      instructionBudget: this.budget,
      timeLimitMs: this.timeLimitMs,
      ...(this.now ? { now: this.now } : {}),
    });
    this.openLibraries();
    this.markers = this.runPrelude();
    this.installBuiltins();
    this.load(this.script);
    this.meter.remeasure();
  }

  /** Calls the global function `fnName` with JSON-like arguments and returns its first result as JS. */
  call(fnName: string, ...args: unknown[]): unknown {
    const L = this.L;
    const base = lua.lua_gettop(L);
    try {
      if (lua.lua_getglobal(L, to_luastring(fnName)) !== lua.LUA_TFUNCTION) {
        throw new LuaAdapterError('LUA_MISSING_FUNCTION', this.name, fnName, `define 'function ${fnName}(...)' in the script`);
      }
      const argBytes = args.reduce<number>((sum, arg) => sum + jsValueBytes(arg, this.memoryLimitBytes), 0);
      if (!this.meter.reserve(argBytes)) {
        throw new LuaAdapterError('LUA_MEMORY_EXCEEDED', this.name, fnName, `its arguments do not fit in ${this.limitText()}`);
      }
      for (const [i, arg] of args.entries()) this.convert(fnName, `argument ${i + 1}`, () => pushJs(L, arg, this.markers));
      this.protectedCall(fnName, args.length, 1, 'LUA_RUNTIME_ERROR');
      return this.convert(fnName, 'result', () => toJs(L, -1, this.markers, new JsonBudget(this.memoryLimitBytes)));
    } finally {
      lua.lua_settop(L, base);
    }
  }

  /** Whether the script defines a global function of this name. */
  hasFunction(fnName: string): boolean {
    const type = lua.lua_getglobal(this.L, to_luastring(fnName));
    lua.lua_pop(this.L, 1);
    return type === lua.LUA_TFUNCTION;
  }

  /** Reads a global (e.g. `framing`) as a JS value; `undefined` when unset. */
  getGlobal(name: string): unknown {
    const L = this.L;
    lua.lua_getglobal(L, to_luastring(name));
    try {
      return this.convert(name, 'global', () => toJs(L, -1, this.markers, new JsonBudget(this.memoryLimitBytes)));
    } finally {
      lua.lua_pop(L, 1);
    }
  }

  close(): void {
    lua.lua_close(this.L);
  }

  private convert<T>(fnName: string, what: string, f: () => T): T {
    try {
      return f();
    } catch (e) {
      if (e instanceof JsonBoundaryError) throw new LuaAdapterError('LUA_VALUE_NOT_JSON', this.name, fnName, `${what} ${e.message}`);
      throw e;
    }
  }

  private openLibraries(): void {
    const libs: Array<[string, LuaCFunction]> = [
      ['_G', lualib.luaopen_base],
      ['table', lualib.luaopen_table],
      ['string', lualib.luaopen_string],
      ['math', lualib.luaopen_math],
      ['utf8', lualib.luaopen_utf8],
    ];
    for (const [name, open] of libs) {
      lauxlib.luaL_requiref(this.L, to_luastring(name), open, 1);
      lua.lua_pop(this.L, 1);
    }
    for (const name of REMOVED_GLOBALS) {
      lua.lua_pushnil(this.L);
      lua.lua_setglobal(this.L, to_luastring(name));
    }
    meterStringLibrary(this.L, this.meter);
    meterTableLibrary(this.L, this.meter);
  }

  private runPrelude(): JsonMarkers {
    const L = this.L;
    lauxlib.luaL_loadbuffer(L, to_luastring(PRELUDE), null, to_luastring('=prelude'));
    this.protectedCall('<prelude>', 0, 3, 'LUA_LOAD_FAILED');
    const nullValue = lauxlib.luaL_ref(L, lua.LUA_REGISTRYINDEX);
    const objectMt = lauxlib.luaL_ref(L, lua.LUA_REGISTRYINDEX);
    const arrayMt = lauxlib.luaL_ref(L, lua.LUA_REGISTRYINDEX);
    return { arrayMt, objectMt, nullValue };
  }

  private installBuiltins(): void {
    const L = this.L;
    lua.lua_getglobal(L, to_luastring('json'));
    lua.lua_pushcfunction(
      L,
      this.builtin((L) => {
        if (lua.lua_type(L, 1) === lua.LUA_TNIL) throw new Error('json.encode: cannot encode nil');
        const text = JSON.stringify(toJs(L, 1, this.markers, new JsonBudget(this.memoryLimitBytes)));
        this.meter.allocate(L, BUFFER_FACTOR * 3 * text.length + SIZES.STRING);
        lua.lua_pushstring(L, to_luastring(text));
        return 1;
      }),
    );
    lua.lua_setfield(L, -2, to_luastring('encode'));
    lua.lua_pushcfunction(
      L,
      this.builtin((L) => {
        const text = lua.lua_type(L, 1) === lua.LUA_TSTRING ? (lua.lua_tojsstring(L, 1) ?? '') : null;
        if (text === null) throw new Error('json.decode: expected a string');
        let parsed: unknown;
        try {
          parsed = JSON.parse(text);
        } catch (e) {
          throw new Error(`json.decode: invalid JSON (${(e as Error).message}): ${quotedPart(text, 80)}`);
        }
        this.meter.allocate(L, jsValueBytes(parsed, this.memoryLimitBytes));
        pushJs(L, parsed, this.markers);
        return 1;
      }),
    );
    lua.lua_setfield(L, -2, to_luastring('decode'));
    lua.lua_pop(L, 1);
    this.setGlobalFunction('log', (L) => {
      const level = lua.lua_tojsstring(L, 1) ?? 'info';
      const message = lua.lua_gettop(L) >= 2 ? this.luaToString(L, 2) : '';
      this.logSink(LOG_LEVELS.includes(level) ? (level as LuaLogLevel) : 'info', message, this.name);
      return 0;
    });
    this.setGlobalFunction('print', (L) => {
      const parts: string[] = [];
      for (let i = 1; i <= lua.lua_gettop(L); i++) parts.push(this.luaToString(L, i));
      this.logSink('info', parts.join('\t'), this.name);
      return 0;
    });
  }

  /** A value as log text, cut at MAX_LOG_MESSAGE_BYTES (and then made safe by `cutShort`). */
  private luaToString(L: LuaState, idx: number): string {
    const s = lauxlib.luaL_tolstring(L, idx);
    lua.lua_pop(L, 1);
    if (s.length <= MAX_LOG_MESSAGE_BYTES) return new TextDecoder().decode(s);
    const kept = this.cutShort(new TextDecoder().decode(s.subarray(0, MAX_LOG_MESSAGE_BYTES)));
    return `${kept}… [${s.length - MAX_LOG_MESSAGE_BYTES} more bytes not logged]`;
  }

  /**
   * The error a call ended with, as text, running none of its code: the meter is off by then, so
   * a `__tostring` on an error table (which could loop for ever) is not called; such an error is
   * named by its type.
   */
  private errorText(L: LuaState, idx: number): string {
    const type = lua.lua_type(L, idx);
    if (type === lua.LUA_TSTRING || type === lua.LUA_TNUMBER) return this.luaToString(L, idx);
    return `error() was given a ${to_jsstring(lauxlib.luaL_typename(L, idx))}, not a message`;
  }

  private limitText(): string {
    return `${Math.round(this.memoryLimitBytes / (1024 * 1024))} MB`;
  }

  private setGlobalFunction(name: string, f: LuaCFunction): void {
    lua.lua_pushcfunction(this.L, this.builtin(f));
    lua.lua_setglobal(this.L, to_luastring(name));
  }

  /** Wraps a JS builtin so a thrown JS error becomes a Lua error the script (or call()) sees. */
  private builtin(f: LuaCFunction): LuaCFunction {
    return (L) => {
      let result: number;
      try {
        result = f(L);
      } catch (e) {
        if (!(e instanceof Error)) throw e; // a Lua error already raised (the meter's): let it unwind
        const message = e instanceof JsonBoundaryError ? `json: ${e.message}` : e.message;
        lua.lua_pushstring(L, to_luastring(message));
        return lua.lua_error(L);
      }
      return result;
    };
  }

  private load(script: string): void {
    const status = lauxlib.luaL_loadbuffer(this.L, to_luastring(script), null, to_luastring(`=${this.name}`));
    if (status !== lua.LUA_OK) {
      const message = this.luaToString(this.L, -1);
      lua.lua_pop(this.L, 1);
      throw new LuaAdapterError('LUA_LOAD_FAILED', this.name, '<load>', message);
    }
    this.protectedCall('<load>', 0, 0, 'LUA_LOAD_FAILED');
  }

  /** lua_pcall under the meter (budget and ceiling); on failure pops the error and throws a typed error. */
  private protectedCall(fnName: string, nargs: number, nresults: number, code: 'LUA_RUNTIME_ERROR' | 'LUA_LOAD_FAILED'): void {
    const L = this.L;
    const meter = this.meter;
    meter.beginCall();
    // A count of 1: the meter looks at every instruction before it runs (see luaMeter.ts).
    lua.lua_sethook(L, meter.hook, lua.LUA_MASKCOUNT, 1);
    let status: number;
    try {
      status = lua.lua_pcall(L, nargs, nresults, 0);
    } finally {
      lua.lua_sethook(L, null, 0, 0);
    }
    if (meter.exceeded !== null) {
      if (status !== lua.LUA_OK) lua.lua_pop(L, 1);
      if (meter.exceeded === 'memory') {
        throw new LuaAdapterError('LUA_MEMORY_EXCEEDED', this.name, fnName, `used more than ${this.limitText()}`);
      }
      if (meter.exceeded === 'time') {
        throw new LuaAdapterError('LUA_TIME_EXCEEDED', this.name, fnName, `ran for more than ${this.timeLimitMs} ms`);
      }
      throw new LuaAdapterError('LUA_BUDGET_EXCEEDED', this.name, fnName, `more than ${this.budget} instructions`);
    }
    if (status !== lua.LUA_OK) {
      const message = this.errorText(L, -1);
      lua.lua_pop(L, 1);
      throw new LuaAdapterError(code, this.name, fnName, message);
    }
  }
}
