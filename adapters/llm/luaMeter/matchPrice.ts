/**
 * The instruction budget applied to pattern matching (string.find, match, gmatch, gsub). A match
 * runs in one library call, where no hook fires, and Lua's matcher can backtrack exponentially;
 * so its steps are counted first (patternSteps.ts) and charged before the real match runs. A
 * match that would pass the budget is refused before it starts, the same way at every run.
 */
import { lua, type LuaState } from 'fengari';
import type { LuaMeter } from './luaMeter.ts';
import { integerArg } from './meteredCall.ts';
import { findSteps, GmatchWalk, gsubSteps, isDigit, isPlainFind, type PatternWalk } from './patternSteps.ts';

/** Match steps per instruction equivalent (fengari takes about 10–13 ns a step and about 23 ns an instruction). */
export const STEPS_PER_WORK_UNIT = 2;
/** Below this bound on its steps a match is charged the bound without walking it first. */
const WALK_THRESHOLD = 20_000;

const stringAt = (L: LuaState, i: number): Uint8Array | null => (lua.lua_type(L, i) === lua.LUA_TSTRING ? lua.lua_tolstring(L, i) : null);

/** A bound on any match's steps: positions × per-position work, each repetition item multiplying by the subject. */
const stepBound = (subject: number, pattern: Uint8Array): number => {
  let repeats = 0;
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i];
    if (c === 42 || c === 43 || c === 45 || c === 63) repeats++;
    else if (c === 37 && (pattern[i + 1] === 98 || isDigit(pattern[i + 1]))) repeats++; // %b and back-references scan the subject
  }
  return (subject + 2) ** (repeats + 1) * (pattern.length + 1) * 2;
};

const charge = (L: LuaState, meter: LuaMeter, walk: PatternWalk): void =>
  meter.work(L, walk.outcome === 'ceiling' ? meter.remaining + 1 : Math.ceil(walk.steps / STEPS_PER_WORK_UNIT));

/** Charges what a match costs: its `bound` when that is cheap, else the steps of walking it first. */
const price = (L: LuaState, meter: LuaMeter, bound: number, walk: (ceiling: number) => PatternWalk) => {
  if (bound <= WALK_THRESHOLD) meter.work(L, Math.ceil(bound / STEPS_PER_WORK_UNIT));
  else charge(L, meter, walk(meter.remaining * STEPS_PER_WORK_UNIT));
};

/** Lua's start position of find/match (posrelat, then clamped); null when past the end (nothing is searched). */
const startOf = (L: LuaState, length: number): number | null => {
  let init = integerArg(L, 3, 1);
  if (init < 0) init = length + init + 1;
  if (init < 1) init = 1;
  return init > length + 1 ? null : init;
};

/** string.find (`plain` true) and string.match. */
export const priceFind =
  (find: boolean) =>
  (L: LuaState, meter: LuaMeter): void => {
    const subject = stringAt(L, 1);
    const pattern = stringAt(L, 2);
    if (subject === null || pattern === null) return;
    const init = startOf(L, subject.length);
    if (init === null || (find && isPlainFind(pattern, lua.lua_toboolean(L, 4)))) return;
    price(L, meter, stepBound(subject.length, pattern), (ceiling) => findSteps(subject, pattern, init, ceiling));
  };

/** string.gsub: every attempt up to its maximum number of replacements. */
export const priceGsub = (L: LuaState, meter: LuaMeter): void => {
  const subject = stringAt(L, 1);
  const pattern = stringAt(L, 2);
  if (subject === null || pattern === null) return;
  const max = integerArg(L, 4, subject.length + 1);
  price(L, meter, stepBound(subject.length, pattern), (ceiling) => gsubSteps(subject, pattern, max, ceiling));
};

/** For gmatch: prices each call of the iterator as it comes, following the iteration. */
export const gmatchPricer = (L: LuaState): ((L: LuaState, meter: LuaMeter) => void) => {
  const subject = stringAt(L, 1);
  const pattern = stringAt(L, 2);
  if (subject === null || pattern === null) return () => undefined;
  const iteration = new GmatchWalk(subject, pattern);
  const bound = stepBound(subject.length, pattern);
  return (L, meter) => price(L, meter, bound, (ceiling) => iteration.next(ceiling));
};
