/** Typed errors for Lua adapters: every failure names the adapter, the function and what was wrong. */
import { HologramError } from '../../events/index.ts';

export type LuaAdapterErrorCode =
  | 'LUA_LOAD_FAILED' // the script does not compile or its top level raised an error
  | 'LUA_RUNTIME_ERROR' // a called function raised a Lua error
  | 'LUA_BUDGET_EXCEEDED' // the instruction budget of one call ran out
  | 'LUA_MEMORY_EXCEEDED' // the VM would have held more than its memory ceiling
  | 'LUA_TIME_EXCEEDED' // one call ran past its wall-clock limit
  | 'LUA_MISSING_FUNCTION' // the script defines no global function of that name
  | 'LUA_VALUE_NOT_JSON' // a value crossing JS ↔ Lua cannot be represented as JSON
  | 'ADAPTER_NOT_FOUND' // loadAdapter(name) found no script of that name
  | 'ADAPTER_BAD_RESULT'; // an adapter function returned a value of the wrong shape

export class LuaAdapterError extends HologramError {
  constructor(
    readonly code: LuaAdapterErrorCode,
    readonly adapter: string,
    /** The Lua function involved, or '<load>' for the script's top level. */
    readonly fn: string,
    /** The detail: the Lua error message, the missing name, or the offending field. */
    readonly detail: string,
  ) {
    super(`Lua adapter '${adapter}' ${fn}: ${describe(code)}: ${detail}`);
  }
}

export function isLuaAdapterError(e: unknown): e is LuaAdapterError {
  return e instanceof LuaAdapterError;
}

function describe(code: LuaAdapterErrorCode): string {
  switch (code) {
    case 'LUA_LOAD_FAILED':
      return 'script failed to load';
    case 'LUA_RUNTIME_ERROR':
      return 'Lua error';
    case 'LUA_BUDGET_EXCEEDED':
      return 'instruction budget exceeded (runaway loop?)';
    case 'LUA_MEMORY_EXCEEDED':
      return 'memory limit exceeded';
    case 'LUA_TIME_EXCEEDED':
      return 'time limit exceeded';
    case 'LUA_MISSING_FUNCTION':
      return 'no such global function in the script';
    case 'LUA_VALUE_NOT_JSON':
      return 'value cannot cross the JS/Lua boundary as JSON';
    case 'ADAPTER_NOT_FOUND':
      return 'no adapter script of that name';
    case 'ADAPTER_BAD_RESULT':
      return 'returned an invalid result';
  }
}
