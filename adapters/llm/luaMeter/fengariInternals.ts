/**
 * The parts of fengari's internal object layout the memory meter reads (fengari 0.1.5, pinned
 * `~0.1.5` in package.json). Read-only: nothing here changes a fengari object. If an update
 * changes the layout, test/adapters/luaMeter.unit.test.ts fails on the measured sizes.
 */
import type { LuaState } from 'fengari';
import { OpCodesI } from 'fengari/src/lopcodes.js';

/** A Lua value slot: `type` is the tag with variant bits (see defs.js constant_types). */
export type TValue = { type: number; value: unknown };
export type TString = { realstring: Uint8Array; hash: string | null };
export type TableEntry = { key: TValue; value: TValue | undefined };
export type Table = { strong: Map<unknown, TableEntry>; dead_strong: Map<unknown, TableEntry>; metatable: Table | null };
export type Proto = {
  k: TValue[];
  p: Proto[];
  code: unknown[];
  lineinfo: number[];
  upvalues: unknown[];
  locvars: unknown[];
  maxstacksize: number;
  source: TString | null;
};
export type LClosure = { p: Proto; upvals: (TValue | undefined)[] };
export type CClosure = { upvalue: TValue[] };
export type Udata = { metatable: Table | null; uservalue: TValue };
export type Instruction = { opcode: number; A: number; B: number; C: number; Bx: number };
export type CallInfo = {
  func: TValue;
  funcOff: number;
  l_base: number;
  l_code: Instruction[] | null;
  l_savedpc: number;
  next: CallInfo | null;
  previous: CallInfo | null;
};
export type State = {
  stack: (TValue | undefined)[];
  top: number;
  ci: CallInfo;
  base_ci: CallInfo;
  l_G: { l_registry: TValue; mt: (Table | undefined | null)[] };
};

/** The internal view of a state (a fengari LuaState is its lua_State object). */
export const internalsOf = (L: LuaState): State => L as unknown as State;

/** Type tags without variant bits (lua.h). */
export const TAG = { STRING: 4, TABLE: 5, FUNCTION: 6, USERDATA: 7, THREAD: 8 } as const;
/** Function variants: Lua closure, light C function, C closure. */
export const FUNCTION_VARIANT = { LCL: 6, LCF: 6 | (1 << 4), CCL: 6 | (2 << 4) } as const;

export const tagOf = (value: TValue): number => value.type & 0x0f;

/** Opcodes whose instruction can allocate (the rest only move values between existing slots). */
export const OP = {
  GETTABUP: OpCodesI.OP_GETTABUP!,
  GETTABLE: OpCodesI.OP_GETTABLE!,
  SETTABUP: OpCodesI.OP_SETTABUP!,
  SETTABLE: OpCodesI.OP_SETTABLE!,
  NEWTABLE: OpCodesI.OP_NEWTABLE!,
  SELF: OpCodesI.OP_SELF!,
  CONCAT: OpCodesI.OP_CONCAT!,
  CALL: OpCodesI.OP_CALL!,
  TAILCALL: OpCodesI.OP_TAILCALL!,
  SETLIST: OpCodesI.OP_SETLIST!,
  CLOSURE: OpCodesI.OP_CLOSURE!,
  VARARG: OpCodesI.OP_VARARG!,
} as const;

/** RK(x) of Lua 5.3: a constant when bit 8 is set, else a register of the frame. */
export const rk = (state: State, base: number, constants: TValue[], x: number): TValue | undefined =>
  x & 256 ? constants[x & 255] : state.stack[base + x];
