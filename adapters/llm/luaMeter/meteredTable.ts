/**
 * The table library (and rawget/rawset) under the meter. table.concat is rebuilt here so each
 * piece is counted as it is added (a table of a thousand references to one big string would
 * otherwise build a thousand copies in one call); the others are guarded by what they can add
 * (entries, stack slots) and charged the work of their loops, which run in one instruction.
 */
import { lauxlib, lua, to_luastring, type LuaCFunction, type LuaState } from 'fengari';
import { SIZES } from './heapSize.ts';
import type { LuaMeter } from './luaMeter.ts';
import { BUFFER_FACTOR, integerArg, meterLibrary, replaceField, stringArgLength, type Guard } from './meteredCall.ts';

const EMPTY = new Uint8Array(0);
const INVALID_VALUE = to_luastring("invalid value (%s) at index %d in table for 'concat'");

/** table.concat, as ltablib.js has it, checking the room before each piece is added. */
const meteredConcat =
  (meter: LuaMeter, original: LuaCFunction): LuaCFunction =>
  (L) => {
    if (lua.lua_type(L, 1) !== lua.LUA_TTABLE) return original(L); // it raises the argument error
    const length = lauxlib.luaL_len(L, 1);
    const sep = lauxlib.luaL_optlstring(L, 2, EMPTY);
    let i = lauxlib.luaL_optinteger(L, 3, 1);
    const last = lauxlib.luaL_optinteger(L, 4, length);
    if (last >= i) meter.work(L, last - i + 1);
    const parts: Uint8Array[] = [];
    let total = 0;
    for (; i <= last; i++) {
      lua.lua_geti(L, 1, i);
      if (!lua.lua_isstring(L, -1)) lauxlib.luaL_error(L, INVALID_VALUE, lauxlib.luaL_typename(L, -1), i);
      const piece = lua.lua_tolstring(L, -1) ?? EMPTY;
      lua.lua_pop(L, 1);
      total += piece.length + (i < last ? sep.length : 0);
      meter.room(L, BUFFER_FACTOR * total + SIZES.STRING);
      parts.push(piece);
      if (i < last && sep.length > 0) parts.push(sep);
    }
    const out = new Uint8Array(total);
    let at = 0;
    for (const part of parts) {
      out.set(part, at);
      at += part.length;
    }
    lua.lua_pushlstring(L, out, total);
    meter.charge(L, SIZES.STRING + total);
    return 1;
  };

const rawLength = (L: LuaState, i: number): number => (lua.lua_type(L, i) === lua.LUA_TTABLE ? lua.lua_rawlen(L, i) : 0);

/** Shifting the entries after the position is work proportional to the length. */
const shift: Guard = (L, meter) => {
  meter.work(L, rawLength(L, 1));
  meter.room(L, SIZES.ENTRY);
};

/** table.move(a1, f, e, t [,a2]): e - f + 1 entries copied, one read and one write each. */
const move: Guard = (L, meter) => {
  const count = integerArg(L, 3, 0) - integerArg(L, 2, 1) + 1;
  if (count <= 0) return;
  meter.work(L, 2 * count);
  meter.room(L, count * SIZES.ENTRY);
};

/** table.unpack(t, i, j): j - i + 1 values onto the stack. */
const unpack: Guard = (L, meter) => {
  const first = integerArg(L, 2, 1);
  const count = integerArg(L, 3, rawLength(L, 1)) - first + 1;
  if (count <= 0) return;
  meter.work(L, count);
  meter.room(L, count * SIZES.SLOT);
};

const sort: Guard = (L, meter) => {
  const n = rawLength(L, 1);
  meter.work(L, n * Math.ceil(Math.log2(n + 1)));
};

const pack: Guard = (L, meter) => meter.room(L, SIZES.TABLE + lua.lua_gettop(L) * SIZES.ENTRY);

/** A string key gets its hash the first time it is used (see instructionCost.ts). */
const keyed: Guard = (L, meter) => {
  const hash = lua.lua_type(L, 2) === lua.LUA_TSTRING ? SIZES.HASH + 2 * stringArgLength(L, 2) : 0;
  meter.allocate(L, SIZES.ENTRY + hash);
};

/** Puts the global `table` library and rawget/rawset (already opened) under `meter`. */
export const meterTableLibrary = (L: LuaState, meter: LuaMeter): void => {
  meterLibrary(L, meter, 'table', { insert: shift, remove: shift, move, unpack, sort, pack });
  lua.lua_getglobal(L, to_luastring('table'));
  replaceField(L, 'concat', (original) => meteredConcat(meter, original));
  lua.lua_pop(L, 1);
  meterLibrary(L, meter, '_G', { rawget: keyed, rawset: keyed });
};
