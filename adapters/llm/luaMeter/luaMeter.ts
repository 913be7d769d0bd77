/**
 * The memory ceiling and instruction budget of one fengari VM. Invariant: the estimate
 * (`measured` at the last heap walk + everything charged since) never falls below what the VM
 * holds, and nothing is allocated that would take the walked size past the ceiling, so a
 * script cannot hold more than the ceiling however it allocates. Deterministic: the same
 * script and inputs stop at the same instruction.
 *
 * Why this mechanism: fengari has no allocator hook (no lua_setallocf; strings are Uint8Arrays
 * and tables JS Maps, freed by JS's collector). So the meter looks at each instruction before
 * it runs (a count hook of 1; see instructionCost.ts): CONCAT is checked against the room left
 * before its buffer exists, which is what stops `s = s .. s` doubling to 4 GB in 40 steps;
 * table, closure and call growth is charged per instruction. The library functions that can
 * build much more than their arguments in one call (string.rep, format, gsub, table.concat, ...)
 * are wrapped to check their result's bound first (meteredLibraries.ts). Charges count garbage
 * too, so when they reach the ceiling the reachable heap is walked (heapSize.ts) and the estimate
 * starts again from what is really held: only a walked size past the ceiling refuses.
 * Work done inside library functions is charged to the instruction budget in instruction
 * equivalents, so a one-instruction loop in C (string.rep('', 2^31)) is stopped too.
 */
import type { LuaState } from 'fengari';
import { lua, to_luastring } from 'fengari';
import { measureHeap } from './heapSize.ts';
import { nextInstructionBytes } from './instructionCost.ts';

export type LuaMeterLimits = Readonly<{
  /** Bytes (estimated, see heapSize.ts) the VM may hold. */
  memoryLimitBytes: number;
  /** Instructions (and instruction equivalents of library work) per call. */
  instructionBudget: number;
  /**
   * Wall-clock milliseconds per call, the backstop for time the budget does not see (a slow
   * machine, work the pricing misses). Checked every CLOCK_EVERY instructions and before large
   * library work. Not deterministic, unlike the budget: what a plugin answers is recorded, so
   * replay never runs it again.
   */
  timeLimitMs?: number;
  /** The clock for the time limit, in milliseconds (tests inject one). */
  now?: () => number;
}>;

export type LimitExceeded = 'memory' | 'instructions' | 'time';

const MESSAGE: Readonly<Record<LimitExceeded, string>> = {
  memory: 'memory limit exceeded',
  instructions: 'instruction budget exceeded',
  time: 'time limit exceeded',
};

/** Instructions between two looks at the clock. */
const CLOCK_EVERY = 4096;
/** Library work (in instruction equivalents) large enough to look at the clock first. */
const CLOCK_WORK = 1024;

export class LuaMeter {
  /** Which limit the current call ran into, if one. Sticky until the next call begins. */
  exceeded: LimitExceeded | null = null;
  private measured = 0;
  private charged = 0;
  private instructions = 0;
  private deadline = Number.POSITIVE_INFINITY;
  private readonly now: () => number;

  constructor(
    private readonly L: LuaState,
    readonly limits: LuaMeterLimits,
  ) {
    this.now = limits.now ?? (() => performance.now());
  }

  /** Measures the heap from scratch (after a load: the script's own tables and functions). */
  remeasure(): number {
    this.measured = measureHeap(this.L);
    this.charged = 0;
    return this.measured;
  }

  /** What the VM is known to hold at most, in bytes. */
  get estimate(): number {
    return this.measured + this.charged;
  }

  /** Starts a call: a fresh instruction budget; the memory is the VM's and carries on. */
  beginCall(): void {
    this.instructions = 0;
    this.exceeded = null;
    this.deadline = this.limits.timeLimitMs === undefined ? Number.POSITIVE_INFINITY : this.now() + this.limits.timeLimitMs;
  }

  /** The count hook (set with a count of 1): the budget, then what the next instruction allocates. */
  readonly hook = (L: LuaState): void => {
    if (this.exceeded !== null) this.raise(L); // every instruction after a refusal fails too, even under pcall
    if (++this.instructions > this.limits.instructionBudget) this.refuse(L, 'instructions');
    if (this.instructions % CLOCK_EVERY === 0) this.checkClock(L);
    const bytes = nextInstructionBytes(L);
    if (bytes > 0) this.allocate(L, bytes);
  };

  /** Whether `bytes` more fit under the ceiling, walking the heap first when the estimate says no. */
  fits(bytes: number): boolean {
    if (this.measured + this.charged + bytes <= this.limits.memoryLimitBytes) return true;
    this.remeasure();
    return this.measured + bytes <= this.limits.memoryLimitBytes;
  }

  /** Outside a call (values pushed in from JS): charges `bytes` when they fit; false when they do not. */
  reserve(bytes: number): boolean {
    if (!this.fits(bytes)) return false;
    this.charged += bytes;
    return true;
  }

  /** Inside a call: `bytes` are about to be allocated; raises the memory error when they do not fit. */
  allocate(L: LuaState, bytes: number): void {
    if (this.exceeded !== null) this.raise(L);
    if (!this.fits(bytes)) this.refuse(L, 'memory');
    this.charged += bytes;
  }

  /** Inside a call: like `allocate`, but only checks the room; the caller charges what was really made. */
  room(L: LuaState, bytes: number): void {
    if (this.exceeded !== null) this.raise(L);
    if (!this.fits(bytes)) this.refuse(L, 'memory');
  }

  /** Records bytes already allocated (a library function's results). */
  charge(L: LuaState, bytes: number): void {
    this.charged += bytes;
    if (this.estimate > this.limits.memoryLimitBytes) this.room(L, 0);
  }

  /** Instruction equivalents left to the current call. */
  get remaining(): number {
    return Math.max(0, this.limits.instructionBudget - this.instructions);
  }

  /** Inside a call: `units` instruction equivalents of work a library function is about to do. */
  work(L: LuaState, units: number): void {
    if (this.exceeded !== null) this.raise(L);
    this.instructions += units;
    if (this.instructions > this.limits.instructionBudget) this.refuse(L, 'instructions');
    if (units >= CLOCK_WORK) this.checkClock(L);
  }

  private checkClock(L: LuaState): void {
    if (this.deadline !== Number.POSITIVE_INFINITY && this.now() > this.deadline) this.refuse(L, 'time');
  }

  private refuse(L: LuaState, limit: LimitExceeded): never {
    this.exceeded = limit;
    return this.raise(L);
  }

  private raise(L: LuaState): never {
    lua.lua_pushstring(L, to_luastring(MESSAGE[this.exceeded ?? 'memory']));
    return lua.lua_error(L);
  }
}
