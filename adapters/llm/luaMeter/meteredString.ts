/**
 * The string library under the meter. Each guard bounds what one call can build from its
 * arguments before it runs: string.rep (count × length), string.format (every argument may be
 * repeated, %q quadruples), string.gsub (a replacement per match; a function or table
 * replacement is counted as it answers), string.pack (sizes in the format), captures of
 * find/match/gmatch (each at most the subject). The rest of the library builds at most a copy
 * of one argument. Every pattern match is priced in steps before it runs (matchPrice.ts), since
 * backtracking has no bound in the arguments' sizes. `string.dump` is removed: without `load` a dumped chunk is of no use.
 */
import { lauxlib, lua, to_luastring, type LuaCFunction, type LuaState } from 'fengari';
import { SIZES } from './heapSize.ts';
import type { LuaMeter } from './luaMeter.ts';
import { gmatchPricer, priceFind, priceGsub } from './matchPrice.ts';
import { isDigit } from './patternSteps.ts';
import {
  BUFFER_FACTOR,
  BYTES_PER_WORK_UNIT,
  integerArg,
  meterLibrary,
  replaceField,
  resultBytes,
  stringArgLength,
  type Guard,
} from './meteredCall.ts';

const PERCENT = 37;
/** The longest text one format item of a number can give (%99.99f of 1e308). */
const NUMBER_ITEM = 430;

/** Upper bound of the captures a pattern can make: its '(' (at most 32 in Lua). */
const captureCount = (L: LuaState, i: number): number => {
  const pattern = lua.lua_type(L, i) === lua.LUA_TSTRING ? lua.lua_tolstring(L, i) : null;
  let count = 0;
  if (pattern !== null) for (const byte of pattern) if (byte === 40) count++;
  return Math.min(count, 32);
};

const scan = (L: LuaState, meter: LuaMeter, bytes: number): void => meter.work(L, Math.ceil(bytes / BYTES_PER_WORK_UNIT));

const copyOfSubject: Guard = (L, meter) => {
  const length = stringArgLength(L, 1);
  meter.room(L, BUFFER_FACTOR * length + SIZES.STRING);
  scan(L, meter, length);
};

const rep: Guard = (L, meter) => {
  const n = integerArg(L, 2, 0);
  if (n <= 0) return;
  const bytes = n * stringArgLength(L, 1) + (n - 1) * stringArgLength(L, 3);
  meter.room(L, BUFFER_FACTOR * bytes + SIZES.STRING);
  meter.work(L, Math.ceil(n / 4) + Math.ceil(bytes / BYTES_PER_WORK_UNIT));
};

/**
 * string.format: `%s` arguments that are not strings are turned into strings first (calling
 * their __tostring once, as format would), so every argument's length is known.
 */
const format: Guard = (L, meter) => {
  const fmt = lua.lua_type(L, 1) === lua.LUA_TSTRING ? lua.lua_tolstring(L, 1) : null;
  if (fmt === null) return;
  const top = lua.lua_gettop(L);
  let bytes = fmt.length + SIZES.STRING;
  let arg = 1;
  for (let i = 0; i < fmt.length; i++) {
    if (fmt[i] !== PERCENT) continue;
    if (fmt[++i] === PERCENT) continue;
    arg++;
    while (i < fmt.length && (fmt[i] === 45 || fmt[i] === 43 || fmt[i] === 32 || fmt[i] === 35 || fmt[i] === 48)) i++;
    while (i < fmt.length && (isDigit(fmt[i]) || fmt[i] === 46)) i++;
    if (arg > top) break;
    const conversion = fmt[i];
    const type = lua.lua_type(L, arg);
    if (conversion === 115 /* s */ && type !== lua.LUA_TSTRING && type !== lua.LUA_TNUMBER) {
      lauxlib.luaL_tolstring(L, arg);
      lua.lua_replace(L, arg);
    }
    const length = stringArgLength(L, arg);
    if (conversion === 113 /* q */) bytes += 4 * length + 2;
    else bytes += lua.lua_type(L, arg) === lua.LUA_TSTRING ? length + 99 : NUMBER_ITEM;
  }
  meter.room(L, BUFFER_FACTOR * bytes);
  scan(L, meter, bytes);
};

/** string.unpack: what it unpacks comes out of its data string (argument 2). */
const unpack: Guard = (L, meter) => {
  const length = stringArgLength(L, 2);
  meter.room(L, BUFFER_FACTOR * length + SIZES.STRING);
  scan(L, meter, length);
};

/** find and match: each capture is a piece of the subject (or a position); the match's steps are priced first. */
const search =
  (find: boolean): Guard =>
  (L, meter) => {
    const length = stringArgLength(L, 1);
    meter.room(L, (captureCount(L, 2) + 1) * (length + SIZES.STRING));
    scan(L, meter, length);
    priceFind(find)(L, meter);
  };

/** A replacement function (or table) counted as it answers: the buffer holds the subject and every answer. */
const countingReplacement = (meter: LuaMeter, subject: number, isTable: boolean): LuaCFunction => {
  let bytes = subject;
  return (L) => {
    if (isTable) {
      lua.lua_settop(L, 1);
      lua.lua_gettable(L, lua.lua_upvalueindex(1));
    } else {
      const args = lua.lua_gettop(L);
      lua.lua_pushvalue(L, lua.lua_upvalueindex(1));
      lua.lua_insert(L, 1);
      lua.lua_call(L, args, 1);
    }
    bytes += stringArgLength(L, -1);
    meter.room(L, BUFFER_FACTOR * bytes);
    return 1;
  };
};

/**
 * gsub: a string replacement adds its literal bytes per match and each %1..%9 at most the match
 * (matches do not overlap, so all of them together at most the subject); a function or table
 * replacement is wrapped to count what it answers.
 */
const gsubRoom: Guard = (L, meter) => {
  const subject = stringArgLength(L, 1);
  const type = lua.lua_type(L, 3);
  if (type === lua.LUA_TFUNCTION || type === lua.LUA_TTABLE) {
    lua.lua_pushvalue(L, 3);
    lua.lua_pushcclosure(L, countingReplacement(meter, subject, type === lua.LUA_TTABLE), 1);
    lua.lua_replace(L, 3);
    scan(L, meter, subject);
    return;
  }
  const replacement = type === lua.LUA_TSTRING || type === lua.LUA_TNUMBER ? lua.lua_tolstring(L, 3) : null;
  if (replacement === null) return;
  const matches = Math.max(0, Math.min(integerArg(L, 4, subject + 1), subject + 1));
  let literal = 0;
  let captures = 0;
  for (let i = 0; i < replacement.length; i++) {
    if (replacement[i] === PERCENT && isDigit(replacement[i + 1])) {
      captures++;
      i++;
    } else literal++;
  }
  const positions = captures * matches * 24; // a position capture "()" is a number
  meter.room(L, BUFFER_FACTOR * (subject + matches * literal + captures * subject + positions) + SIZES.STRING);
  scan(L, meter, subject);
};

/** gsub: the room for what it builds (first, so a replacement too big is refused as such), then its match steps. */
const gsub: Guard = (L, meter) => {
  gsubRoom(L, meter);
  priceGsub(L, meter);
};

/** string.pack: every option takes at most 16 bytes, except sizes written in the format and the strings packed. */
const pack: Guard = (L, meter) => {
  const fmt = lua.lua_type(L, 1) === lua.LUA_TSTRING ? lua.lua_tolstring(L, 1) : null;
  if (fmt === null) return;
  let bytes = 16 * fmt.length + SIZES.STRING;
  for (const digits of new TextDecoder().decode(fmt).match(/\d+/g) ?? []) bytes += Number(digits);
  for (let i = 2; i <= lua.lua_gettop(L); i++) bytes += stringArgLength(L, i) + 1;
  meter.room(L, BUFFER_FACTOR * bytes);
  scan(L, meter, bytes);
};

/** string.byte pushes one number per byte of the slice. */
const byte: Guard = (L, meter) => {
  const length = stringArgLength(L, 1);
  const from = integerArg(L, 2, 1);
  const to = integerArg(L, 3, from);
  const count = Math.min(length, (to < 0 ? length + to + 1 : to) - (from < 0 ? length + from + 1 : from) + 1);
  if (count > 0) meter.room(L, count * SIZES.SLOT);
};

/** gmatch's iterator, wrapped: each step's match is priced, and its captures are pieces of the subject. */
const meteredGmatch =
  (meter: LuaMeter, original: LuaCFunction): LuaCFunction =>
  (L) => {
    const subject = stringArgLength(L, 1);
    const captures = captureCount(L, 2) + 1;
    const price = gmatchPricer(L);
    original(L);
    lua.lua_pushcclosure(
      L,
      (L) => {
        price(L, meter);
        meter.room(L, captures * (subject + SIZES.STRING));
        lua.lua_settop(L, 0);
        lua.lua_pushvalue(L, lua.lua_upvalueindex(1));
        lua.lua_call(L, 0, lua.LUA_MULTRET);
        const results = lua.lua_gettop(L);
        meter.charge(L, resultBytes(L, results));
        return results;
      },
      1,
    );
    return 1;
  };

/** Puts the global `string` library (already opened) under `meter`. */
export const meterStringLibrary = (L: LuaState, meter: LuaMeter): void => {
  meterLibrary(L, meter, 'string', {
    rep,
    format,
    gsub,
    find: search(true),
    match: search(false),
    pack,
    byte,
    sub: copyOfSubject,
    upper: copyOfSubject,
    lower: copyOfSubject,
    reverse: copyOfSubject,
    unpack,
  });
  lua.lua_getglobal(L, to_luastring('string'));
  replaceField(L, 'gmatch', (original) => meteredGmatch(meter, original));
  lua.lua_pushnil(L);
  lua.lua_setfield(L, -2, to_luastring('dump'));
  lua.lua_pop(L, 1);
};
