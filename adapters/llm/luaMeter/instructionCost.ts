/**
 * What the instruction about to run may allocate, read from the frame before it runs. Pure over
 * the state. Only these opcodes allocate in fengari; every other one moves values between slots
 * that already exist. CONCAT is exact (the sum of its operands); the rest are upper estimates
 * in the units of heapSize.ts.
 */
import {
  internalsOf,
  OP,
  rk,
  TAG,
  tagOf,
  FUNCTION_VARIANT,
  type LClosure,
  type State,
  type TString,
  type TValue,
} from './fengariInternals.ts';
import { SIZES } from './heapSize.ts';
import type { LuaState } from 'fengari';

/** A number turned into a string is at most this long ("-2.2250738585072e-308"). */
const NUMBER_AS_STRING = 24;

/** Bytes of the string CONCAT builds from registers `from`..`to`. */
const concatBytes = (state: State, from: number, to: number): number => {
  let bytes = SIZES.STRING;
  for (let r = from; r <= to; r++) {
    const value = state.stack[r];
    if (value === undefined) continue;
    const tag = tagOf(value);
    if (tag === TAG.STRING) bytes += (value.value as TString).realstring.length;
    else if (tag === 3) bytes += NUMBER_AS_STRING; // LUA_TNUMBER
  }
  return bytes;
};

/**
 * A string used as a table key for the first time gets a hash: fengari builds it as a JS string
 * of two hex digits per byte (ltable.js table_hash → luaS_hashlongstr), so a 30 MB key costs 60 MB.
 */
const keyHashBytes = (key: TValue | undefined): number => {
  if (key === undefined || tagOf(key) !== TAG.STRING) return 0;
  const s = key.value as TString;
  return s.hash === null ? SIZES.HASH + 2 * s.realstring.length : 0;
};

const callBytes = (callee: TValue | undefined): number =>
  callee?.type === FUNCTION_VARIANT.LCL ? SIZES.CALLINFO + (callee.value as LClosure).p.maxstacksize * SIZES.SLOT : SIZES.CALLINFO;

/** Estimated bytes the next instruction of the running Lua function may allocate. */
export const nextInstructionBytes = (L: LuaState): number => {
  const state = internalsOf(L);
  const ci = state.ci;
  const code = ci.l_code;
  if (code === null) return 0;
  const i = code[ci.l_savedpc - 1];
  if (i === undefined) return 0;
  const base = ci.l_base;
  const closure = ci.func.value as LClosure;
  switch (i.opcode) {
    case OP.CONCAT:
      return concatBytes(state, base + i.B, base + i.C);
    case OP.NEWTABLE:
      return SIZES.TABLE;
    case OP.SETTABLE:
    case OP.SETTABUP:
      return SIZES.ENTRY + keyHashBytes(rk(state, base, closure.p.k, i.B));
    case OP.GETTABLE:
    case OP.GETTABUP:
    case OP.SELF:
      return keyHashBytes(rk(state, base, closure.p.k, i.C));
    case OP.SETLIST:
      return (i.B !== 0 ? i.B : state.top - (base + i.A) - 1) * SIZES.ENTRY;
    case OP.CLOSURE:
      return SIZES.CLOSURE + (closure.p.p[i.Bx]?.upvalues.length ?? 0) * SIZES.UPVALUE;
    case OP.CALL:
    case OP.TAILCALL:
      return callBytes(state.stack[base + i.A]);
    case OP.VARARG:
      return (i.B !== 0 ? i.B - 1 : Math.max(0, base - ci.funcOff - 1)) * SIZES.SLOT;
    default:
      return 0;
  }
};
