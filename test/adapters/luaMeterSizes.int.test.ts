/**
 * The meter's size estimates against what V8 really holds: for each kind of object a script
 * can pile up, 100,000 of them, measured as heap plus array buffers after a full collection.
 * If fengari's layout or V8's sizes change, the estimate drifts out of the band and this fails.
 */
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { describe, expect, it } from 'vitest';
import { LuaVm } from '../../adapters/llm/luaVm.ts';

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

const held = (): number => {
  for (let i = 0; i < 4; i++) gc();
  const { heapUsed, arrayBuffers } = process.memoryUsage();
  return heapUsed + arrayBuffers;
};

const CASES: Readonly<Record<string, string>> = {
  'array entries': 't = {} for i = 1, 200000 do t[i] = i end',
  tables: 't = {} for i = 1, 100000 do t[i] = {} end',
  'short strings': 't = {} for i = 1, 100000 do t[i] = "s" .. i end',
  'string keys': 't = {} for i = 1, 100000 do t["k" .. i] = true end',
  closures: 't = {} for i = 1, 100000 do t[i] = function() return i end end',
  'one big string': 't = string.rep("x", 20000000)',
};

describe('the memory estimate against V8', () => {
  it.each(Object.entries(CASES))('%s: estimated within 0.8–1.5 of the measure', (_name, body) => {
    const script = `function f() ${body} end function clear() t = nil end`;
    const vm = new LuaVm({ name: 'sizes', script, instructionBudget: 50_000_000, memoryLimitBytes: 1e9 });
    // Once to warm up (V8's first run of a shape allocates more than the objects), then measured.
    vm.call('f');
    vm.call('clear');
    const before = held();
    const estimatedBefore = vm.heapBytes();
    vm.call('f');
    const real = held() - before;
    const estimated = vm.heapBytes() - estimatedBefore;
    vm.close();
    expect(estimated / real).toBeGreaterThan(0.8);
    expect(estimated / real).toBeLessThan(1.5);
  });
});
