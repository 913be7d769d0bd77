/**
 * How much a fengari state holds: every object reachable from its registry, its type
 * metatables and its stack, each counted once, in estimated bytes. Pure over the state (reads
 * it, changes nothing). Unreachable objects are not counted: JS's collector frees them, since
 * fengari keeps no object alive that Lua cannot reach.
 */
import type { LuaState } from 'fengari';
import {
  FUNCTION_VARIANT,
  internalsOf,
  TAG,
  tagOf,
  type CClosure,
  type LClosure,
  type Proto,
  type State,
  type Table,
  type TString,
  type TValue,
  type Udata,
} from './fengariInternals.ts';

/**
 * Estimated sizes of fengari's objects in V8, measured on Node 20 with fengari 0.1.5 (heap and
 * array buffers after full collections, 100,000 of each; test/adapters/luaMeterSizes.int.test.ts
 * keeps the estimate within 0.8–1.5 of the measure), rounded up.
 */
export const SIZES = {
  /** A stack slot: the array cell and its TValue. */
  SLOT: 40,
  /** A TString with its Uint8Array and buffer, before the bytes. */
  STRING: 240,
  /** A Table with its two Maps (each Map's backing store is most of it). */
  TABLE: 460,
  /** One table entry: the Map cell, the entry object, the key and value TValues. */
  ENTRY: 180,
  /** The hash of a string key: a JS string of two hex digits a byte, plus its header. */
  HASH: 64,
  CLOSURE: 112,
  UPVALUE: 40,
  PROTO: 400,
  /** One decoded instruction object plus its line info. */
  INSTRUCTION: 64,
  CALLINFO: 160,
  USERDATA: 120,
} as const;

type Pending = TString | Table | LClosure | CClosure | Proto | Udata | State;

/** Estimated bytes of what `L` can still reach. */
export const measureHeap = (L: LuaState): number => {
  const state = internalsOf(L);
  const seen = new Set<object>();
  const pending: { kind: string; of: Pending }[] = [];
  let bytes = 0;

  const visit = (kind: string, of: Pending | null | undefined): void => {
    if (of === null || of === undefined || seen.has(of)) return;
    seen.add(of);
    pending.push({ kind, of });
  };
  const visitValue = (value: TValue | undefined): void => {
    if (value === undefined) return;
    switch (tagOf(value)) {
      case TAG.STRING:
        return visit('string', value.value as TString);
      case TAG.TABLE:
        return visit('table', value.value as Table);
      case TAG.FUNCTION:
        if (value.type === FUNCTION_VARIANT.LCL) return visit('lclosure', value.value as LClosure);
        if (value.type === FUNCTION_VARIANT.CCL) return visit('cclosure', value.value as CClosure);
        return; // a light C function is a JS function of the host, not Lua's
      case TAG.USERDATA:
        return visit('udata', value.value as Udata);
      case TAG.THREAD:
        return visit('state', value.value as State);
      default:
        return; // nil, booleans, numbers, light userdata live in their slot
    }
  };

  visit('state', state);
  visitValue(state.l_G.l_registry);
  for (const mt of state.l_G.mt) visit('table', mt);

  for (let item = pending.pop(); item !== undefined; item = pending.pop()) {
    switch (item.kind) {
      case 'string': {
        const s = item.of as TString;
        bytes += SIZES.STRING + s.realstring.length + (s.hash === null ? 0 : SIZES.HASH + s.hash.length);
        break;
      }
      case 'table': {
        const t = item.of as Table;
        bytes += SIZES.TABLE + (t.strong.size + t.dead_strong.size) * SIZES.ENTRY;
        for (const entry of t.strong.values()) {
          visitValue(entry.key);
          visitValue(entry.value);
        }
        for (const entry of t.dead_strong.values()) visitValue(entry.key);
        visit('table', t.metatable);
        break;
      }
      case 'lclosure': {
        const cl = item.of as LClosure;
        bytes += SIZES.CLOSURE + cl.upvals.length * SIZES.UPVALUE;
        for (const upvalue of cl.upvals) visitValue(upvalue);
        visit('proto', cl.p);
        break;
      }
      case 'cclosure': {
        const cl = item.of as CClosure;
        bytes += SIZES.CLOSURE + cl.upvalue.length * SIZES.UPVALUE;
        for (const upvalue of cl.upvalue) visitValue(upvalue);
        break;
      }
      case 'proto': {
        const p = item.of as Proto;
        bytes += SIZES.PROTO + p.code.length * SIZES.INSTRUCTION + (p.upvalues.length + p.locvars.length) * SIZES.UPVALUE;
        for (const k of p.k) visitValue(k);
        for (const inner of p.p) visit('proto', inner);
        visit('string', p.source);
        break;
      }
      case 'udata': {
        const u = item.of as Udata;
        bytes += SIZES.USERDATA;
        visit('table', u.metatable);
        visitValue(u.uservalue);
        break;
      }
      case 'state': {
        const thread = item.of as State;
        bytes += thread.stack.length * 8;
        for (const slot of thread.stack) {
          if (slot === undefined) continue;
          bytes += SIZES.SLOT;
          visitValue(slot);
        }
        for (let ci = thread.base_ci.next; ci !== null; ci = ci.next) bytes += SIZES.CALLINFO;
        break;
      }
    }
  }
  return bytes;
};
