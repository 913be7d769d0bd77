/**
 * JSON ↔ Lua value conversion for the fengari VM. Lossless for JSON: arrays and objects carry a
 * marker metatable so empty ones survive a round trip, and JSON null is a sentinel table.
 *
 * Lua → JS rules (documented for adapter authors):
 * - `json.null` → null; a table with the array marker (`json.array(t)`) → array (holes → null);
 *   a table with the object marker (`json.object(t)`) → object (number keys become strings).
 * - An unmarked table: empty → `{}`; keys exactly 1..n → array; all string keys → object;
 *   anything else (sparse or mixed keys) is an error naming the path.
 * - Functions, userdata, threads, NaN and ±Infinity are errors; integers and floats → number.
 * JS → Lua: null → `json.null`, arrays/objects → marked tables, `undefined` object fields are
 * dropped, numbers that fit Lua's 32-bit integers (fengari) become integers, others floats.
 */
import { lua, to_luastring, type LuaState } from 'fengari';

/** Registry references to the marker metatables and the null sentinel. */
export type JsonMarkers = Readonly<{ arrayMt: number; objectMt: number; nullValue: number }>;

/** A value that cannot be represented as JSON; `path` locates it (e.g. `messages[2].content`). */
export class JsonBoundaryError extends Error {
  constructor(
    readonly path: string,
    readonly problem: string,
  ) {
    super(`${path || '<value>'}: ${problem}`);
  }
}

/**
 * What a Lua → JS conversion may still build, in bytes (strings by length, 64 per table entry).
 * A table shared many times (a DAG) converts once per reference, so without a budget 60 lines
 * of Lua (`t = {t, t}` in a loop) make a value of 2^60 nodes.
 */
export class JsonBudget {
  constructor(
    readonly limit: number,
    private left = limit,
  ) {}

  spend(bytes: number, path: string): void {
    this.left -= bytes;
    if (this.left < 0) {
      throw new JsonBoundaryError(path, `the value is larger than ${this.limit} bytes as JSON (a table shared many times?); return less`);
    }
  }
}

const UNLIMITED = { spend: () => undefined } as const;
const ENTRY_BYTES = 64;

const MAX_DEPTH = 200;
const INT32_MIN = -2147483648;
const INT32_MAX = 2147483647;

export function pushJs(L: LuaState, value: unknown, m: JsonMarkers, path = '', depth = 0): void {
  if (depth > MAX_DEPTH) throw new JsonBoundaryError(path, `nested deeper than ${MAX_DEPTH} levels`);
  lua.lua_checkstack(L, 4);
  if (value === undefined) return lua.lua_pushnil(L);
  if (value === null) return void lua.lua_rawgeti(L, lua.LUA_REGISTRYINDEX, m.nullValue);
  switch (typeof value) {
    case 'boolean':
      return lua.lua_pushboolean(L, value);
    case 'number':
      if (!Number.isFinite(value)) throw new JsonBoundaryError(path, `number ${value} is not valid JSON`);
      if (Number.isInteger(value) && value >= INT32_MIN && value <= INT32_MAX) return lua.lua_pushinteger(L, value);
      return lua.lua_pushnumber(L, value);
    case 'string':
      return lua.lua_pushstring(L, to_luastring(value));
    case 'object':
      return Array.isArray(value) ? pushArray(L, value, m, path, depth) : pushObject(L, value, m, path, depth);
    default:
      throw new JsonBoundaryError(path, `a ${typeof value} is not valid JSON`);
  }
}

function pushArray(L: LuaState, arr: readonly unknown[], m: JsonMarkers, path: string, depth: number): void {
  lua.lua_createtable(L, arr.length, 0);
  arr.forEach((item, i) => {
    pushJs(L, item === undefined ? null : item, m, `${path}[${i}]`, depth + 1);
    lua.lua_rawseti(L, -2, i + 1);
  });
  setMarker(L, m.arrayMt);
}

function pushObject(L: LuaState, obj: object, m: JsonMarkers, path: string, depth: number): void {
  lua.lua_createtable(L, 0, 0);
  for (const [key, item] of Object.entries(obj)) {
    if (item === undefined) continue;
    pushJs(L, item, m, path ? `${path}.${key}` : key, depth + 1);
    lua.lua_setfield(L, -2, to_luastring(key));
  }
  setMarker(L, m.objectMt);
}

function setMarker(L: LuaState, ref: number): void {
  lua.lua_rawgeti(L, lua.LUA_REGISTRYINDEX, ref);
  lua.lua_setmetatable(L, -2);
}

type Spend = Pick<JsonBudget, 'spend'>;

/** Reads the Lua value at `idx`; `undefined` for nil. The stack is left unchanged. */
export function toJs(L: LuaState, idx: number, m: JsonMarkers, budget: Spend = UNLIMITED, path = '', depth = 0): unknown {
  if (depth > MAX_DEPTH) throw new JsonBoundaryError(path, `nested deeper than ${MAX_DEPTH} levels (a cycle?)`);
  const type = lua.lua_type(L, idx);
  if (type === lua.LUA_TNIL) return undefined;
  if (type === lua.LUA_TBOOLEAN) return lua.lua_toboolean(L, idx);
  if (type === lua.LUA_TNUMBER) {
    const n = lua.lua_tonumber(L, idx);
    if (!Number.isFinite(n)) throw new JsonBoundaryError(path, `number ${n} is not valid JSON`);
    return n;
  }
  if (type === lua.LUA_TSTRING) {
    budget.spend(lua.lua_rawlen(L, idx), path);
    return lua.lua_tojsstring(L, idx) ?? '';
  }
  if (type === lua.LUA_TTABLE) return tableToJs(L, lua.lua_absindex(L, idx), m, budget, path, depth);
  throw new JsonBoundaryError(path, `a Lua ${typeName(type)} is not valid JSON`);
}

type Marker = 'array' | 'object' | 'null' | 'none';

function markerOf(L: LuaState, idx: number, m: JsonMarkers): Marker {
  lua.lua_rawgeti(L, lua.LUA_REGISTRYINDEX, m.nullValue);
  const isNull = lua.lua_rawequal(L, idx, -1);
  lua.lua_pop(L, 1);
  if (isNull) return 'null';
  if (!lua.lua_getmetatable(L, idx)) return 'none';
  lua.lua_rawgeti(L, lua.LUA_REGISTRYINDEX, m.arrayMt);
  const isArray = lua.lua_rawequal(L, -1, -2);
  lua.lua_rawgeti(L, lua.LUA_REGISTRYINDEX, m.objectMt);
  const isObject = lua.lua_rawequal(L, -1, -3);
  lua.lua_pop(L, 3);
  return isArray ? 'array' : isObject ? 'object' : 'none';
}

function tableToJs(L: LuaState, idx: number, m: JsonMarkers, budget: Spend, path: string, depth: number): unknown {
  // Room for the marker lookups and the key/value of the iteration, before either pushes.
  if (!lua.lua_checkstack(L, 8)) throw new JsonBoundaryError(path, 'the Lua stack cannot grow any further');
  const marker = markerOf(L, idx, m);
  if (marker === 'null') return null;
  const entries: Array<[string | number, unknown]> = [];
  lua.lua_pushnil(L);
  while (lua.lua_next(L, idx) !== 0) {
    const keyType = lua.lua_type(L, -2);
    let key: string | number;
    if (keyType === lua.LUA_TSTRING) key = lua.lua_tojsstring(L, -2) ?? '';
    else if (keyType === lua.LUA_TNUMBER) key = lua.lua_tonumber(L, -2);
    else {
      lua.lua_pop(L, 2);
      throw new JsonBoundaryError(path, `table key of type ${typeName(keyType)} is not valid JSON`);
    }
    try {
      budget.spend(ENTRY_BYTES + (typeof key === 'string' ? key.length : 0), path);
      entries.push([key, toJs(L, -1, m, budget, `${path}[${JSON.stringify(key)}]`, depth + 1)]);
    } catch (e) {
      lua.lua_pop(L, 2);
      throw e;
    }
    lua.lua_pop(L, 1);
  }
  if (marker === 'array') return entriesToArray(entries, path, true);
  if (marker === 'object' || entries.length === 0) return entriesToObject(entries);
  if (entries.every(([k]) => typeof k === 'number')) return entriesToArray(entries, path, false);
  if (entries.every(([k]) => typeof k === 'string')) return entriesToObject(entries);
  throw new JsonBoundaryError(path, 'table mixes number and string keys; mark it with json.array() or json.object()');
}

function entriesToArray(entries: ReadonlyArray<[string | number, unknown]>, path: string, marked: boolean): unknown[] {
  const out: unknown[] = [];
  for (const [k] of entries) {
    if (typeof k !== 'number' || !Number.isInteger(k) || k < 1) {
      throw new JsonBoundaryError(path, `array has non-positive-integer key ${JSON.stringify(k)}`);
    }
  }
  const length = entries.reduce((max, [k]) => Math.max(max, k as number), 0);
  if (!marked && length !== entries.length) {
    throw new JsonBoundaryError(
      path,
      `sparse table (keys up to ${length}, ${entries.length} present); mark it with json.array() to allow holes`,
    );
  }
  for (let i = 0; i < length; i++) out.push(null);
  for (const [k, v] of entries) out[(k as number) - 1] = v;
  return out;
}

/** Every key an own property: a key named __proto__ (a model may send one) is kept, never made the prototype. */
function entriesToObject(entries: ReadonlyArray<[string | number, unknown]>): Record<string, unknown> {
  return Object.fromEntries(entries.map(([k, v]) => [String(k), v]));
}

function typeName(type: number): string {
  if (type === lua.LUA_TFUNCTION) return 'function';
  if (type === lua.LUA_TUSERDATA || type === lua.LUA_TLIGHTUSERDATA) return 'userdata';
  if (type === lua.LUA_TTHREAD) return 'thread';
  if (type === lua.LUA_TTABLE) return 'table';
  return `type ${type}`;
}
