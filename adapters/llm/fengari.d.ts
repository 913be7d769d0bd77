/** Minimal typings for the parts of fengari (Lua 5.3 in JS, no bundled types) that luaVm.ts uses. */
declare module 'fengari' {
  export type LuaString = Uint8Array;
  export type LuaState = { readonly __luaState: unique symbol };
  export type LuaDebug = unknown;
  export type LuaCFunction = (L: LuaState) => number;
  export type LuaHook = (L: LuaState, ar: LuaDebug) => void;

  export function to_luastring(s: string): LuaString;
  export function to_jsstring(s: LuaString): string;

  export const lua: {
    LUA_OK: number;
    LUA_ERRRUN: number;
    LUA_ERRSYNTAX: number;
    LUA_ERRMEM: number;
    LUA_ERRERR: number;
    LUA_MULTRET: number;
    LUA_REGISTRYINDEX: number;
    LUA_MASKCOUNT: number;
    LUA_TNIL: number;
    LUA_TBOOLEAN: number;
    LUA_TLIGHTUSERDATA: number;
    LUA_TNUMBER: number;
    LUA_TSTRING: number;
    LUA_TTABLE: number;
    LUA_TFUNCTION: number;
    LUA_TUSERDATA: number;
    LUA_TTHREAD: number;
    lua_absindex(L: LuaState, idx: number): number;
    lua_call(L: LuaState, nargs: number, nresults: number): void;
    lua_geti(L: LuaState, idx: number, n: number): number;
    lua_getfield(L: LuaState, idx: number, k: LuaString): number;
    lua_gettable(L: LuaState, idx: number): number;
    lua_isstring(L: LuaState, idx: number): boolean;
    lua_tocfunction(L: LuaState, idx: number): LuaCFunction | null;
    lua_tolstring(L: LuaState, idx: number): LuaString | null;
    lua_insert(L: LuaState, idx: number): void;
    lua_pushcclosure(L: LuaState, f: LuaCFunction, n: number): void;
    lua_replace(L: LuaState, idx: number): void;
    lua_tointegerx(L: LuaState, idx: number): number | false;
    lua_upvalueindex(i: number): number;
    lua_close(L: LuaState): void;
    lua_checkstack(L: LuaState, n: number): boolean;
    lua_createtable(L: LuaState, narr: number, nrec: number): void;
    lua_error(L: LuaState): never;
    lua_getglobal(L: LuaState, name: LuaString): number;
    lua_getmetatable(L: LuaState, idx: number): boolean;
    lua_gettop(L: LuaState): number;
    lua_isinteger(L: LuaState, idx: number): boolean;
    lua_newtable(L: LuaState): void;
    lua_next(L: LuaState, idx: number): number;
    lua_pcall(L: LuaState, nargs: number, nresults: number, msgh: number): number;
    lua_pop(L: LuaState, n: number): void;
    lua_pushboolean(L: LuaState, b: boolean): void;
    lua_pushcfunction(L: LuaState, f: LuaCFunction): void;
    lua_pushinteger(L: LuaState, n: number): void;
    lua_pushnil(L: LuaState): void;
    lua_pushnumber(L: LuaState, n: number): void;
    lua_pushstring(L: LuaState, s: LuaString): void;
    lua_pushlstring(L: LuaState, s: LuaString, len: number): void;
    lua_pushvalue(L: LuaState, idx: number): void;
    lua_rawequal(L: LuaState, a: number, b: number): boolean;
    lua_rawgeti(L: LuaState, idx: number, n: number): number;
    lua_rawlen(L: LuaState, idx: number): number;
    lua_rawseti(L: LuaState, idx: number, n: number): void;
    lua_setfield(L: LuaState, idx: number, k: LuaString): void;
    lua_setglobal(L: LuaState, name: LuaString): void;
    lua_sethook(L: LuaState, f: LuaHook | null, mask: number, count: number): void;
    lua_setmetatable(L: LuaState, idx: number): void;
    lua_settop(L: LuaState, idx: number): void;
    lua_toboolean(L: LuaState, idx: number): boolean;
    lua_tojsstring(L: LuaState, idx: number): string | null;
    lua_tonumber(L: LuaState, idx: number): number;
    lua_type(L: LuaState, idx: number): number;
  };

  export const lauxlib: {
    luaL_newstate(): LuaState;
    luaL_loadbuffer(L: LuaState, s: LuaString, sz: number | null, name: LuaString): number;
    luaL_requiref(L: LuaState, modname: LuaString, openf: LuaCFunction, glb: number): void;
    luaL_ref(L: LuaState, t: number): number;
    luaL_checkstring(L: LuaState, arg: number): LuaString;
    luaL_len(L: LuaState, idx: number): number;
    luaL_tolstring(L: LuaState, idx: number): LuaString;
    luaL_error(L: LuaState, fmt: LuaString, ...args: unknown[]): never;
    luaL_optlstring(L: LuaState, arg: number, def: LuaString): LuaString;
    luaL_optinteger(L: LuaState, arg: number, def: number): number;
    luaL_typename(L: LuaState, idx: number): LuaString;
  };

  export const lualib: {
    luaopen_base: LuaCFunction;
    luaopen_table: LuaCFunction;
    luaopen_string: LuaCFunction;
    luaopen_math: LuaCFunction;
    luaopen_utf8: LuaCFunction;
  };
}

/** fengari's opcode numbers (Lua 5.3's), read by the memory meter (adapters/llm/luaMeter). */
declare module 'fengari/src/lopcodes.js' {
  export const OpCodesI: Readonly<Record<string, number>>;
}
