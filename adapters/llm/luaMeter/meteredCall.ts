/**
 * Wrapping a library function of a VM so the meter sees it: a guard checks (and charges the
 * work of) what the call may build before the original runs, and the strings it returns are
 * charged after. The wrapper calls the original on the same stack, so arguments, results and
 * error messages ("bad argument #2 to 'rep'") are the original's.
 */
import { lua, to_luastring, type LuaCFunction, type LuaState } from 'fengari';
import { SIZES } from './heapSize.ts';
import type { LuaMeter } from './luaMeter.ts';

/** Bytes a library function scans per instruction equivalent of work (fengari runs about 10 ns a byte, 100 ns an instruction). */
export const BYTES_PER_WORK_UNIT = 8;
/** A luaL_Buffer grows by doubling and its result is copied once more: room for twice the result. */
export const BUFFER_FACTOR = 2;

export type Guard = (L: LuaState, meter: LuaMeter) => void;

/** Length of argument `i` as a string: a string's bytes, a number's at most 24, else 0. */
export const stringArgLength = (L: LuaState, i: number): number => {
  const type = lua.lua_type(L, i);
  if (type === lua.LUA_TSTRING) return lua.lua_rawlen(L, i);
  return type === lua.LUA_TNUMBER ? 24 : 0;
};

/** Argument `i` as an integer, `fallback` when absent or not an integer (the original then reports it). */
export const integerArg = (L: LuaState, i: number, fallback: number): number => {
  if (lua.lua_type(L, i) <= lua.LUA_TNIL) return fallback;
  const n = lua.lua_tointegerx(L, i);
  return n === false ? fallback : n;
};

/** Bytes of the strings among the `count` values on top of the stack. */
export const resultBytes = (L: LuaState, count: number): number => {
  let bytes = 0;
  for (let i = 1; i <= count; i++) if (lua.lua_type(L, -i) === lua.LUA_TSTRING) bytes += SIZES.STRING + lua.lua_rawlen(L, -i);
  return bytes;
};

export const metered =
  (meter: LuaMeter, original: LuaCFunction, guard: Guard): LuaCFunction =>
  (L) => {
    guard(L, meter);
    const results = original(L);
    meter.charge(L, resultBytes(L, results));
    return results;
  };

/** Replaces `library[name]` (a table left on top of the stack) by `make(original)`. */
export const replaceField = (L: LuaState, name: string, make: (original: LuaCFunction) => LuaCFunction): void => {
  const key = to_luastring(name);
  lua.lua_getfield(L, -1, key);
  const original = lua.lua_tocfunction(L, -1);
  lua.lua_pop(L, 1);
  if (original === null) throw new Error(`the Lua library has no function '${name}' to meter`);
  lua.lua_pushcfunction(L, make(original));
  lua.lua_setfield(L, -2, key);
};

/** Meters every function of the global table `library` named in `guards`. */
export const meterLibrary = (L: LuaState, meter: LuaMeter, library: string, guards: Readonly<Record<string, Guard>>): void => {
  lua.lua_getglobal(L, to_luastring(library));
  for (const [name, guard] of Object.entries(guards)) replaceField(L, name, (original) => metered(meter, original, guard));
  lua.lua_pop(L, 1);
};
