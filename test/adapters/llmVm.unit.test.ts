import { describe, expect, it } from 'vitest';
import { LuaVm } from '../../adapters/llm/luaVm.ts';
import { caught } from '../support/llmFixtures.ts';

function vm(script: string, extra: { instructionBudget?: number; log?: (l: string, m: string, a: string) => void } = {}) {
  return new LuaVm({ name: 'probe', script, ...extra });
}

describe('sandbox', () => {
  it('given a script, when it looks for host access, then io, os, require, load and friends are absent', () => {
    const v = vm(`function probe()
      return { io = type(io), os = type(os), require = type(require), dofile = type(dofile), loadfile = type(loadfile),
               load = type(load), debug = type(debug), package = type(package), coroutine = type(coroutine), fengari = type(fengari),
               string = type(string), math = type(math), table = type(table) }
    end`);
    expect(v.call('probe')).toStrictEqual({
      io: 'nil',
      os: 'nil',
      require: 'nil',
      dofile: 'nil',
      loadfile: 'nil',
      load: 'nil',
      debug: 'nil',
      package: 'nil',
      coroutine: 'nil',
      fengari: 'nil',
      string: 'table',
      math: 'table',
      table: 'table',
    });
  });

  it('given a runaway loop, when called, then the instruction budget stops it with a typed error naming adapter and function', () => {
    const v = vm('function spin() while true do end end', { instructionBudget: 100_000 });
    const e = caught(() => v.call('spin'));
    expect(e.code).toBe('LUA_BUDGET_EXCEEDED');
    expect(e.adapter).toBe('probe');
    expect(e.fn).toBe('spin');
    expect(e.message).toContain("'probe' spin");
  });

  it('given a runaway loop that swallows errors with pcall, when called, then it is still stopped', () => {
    const v = vm('function spin() while true do pcall(function() while true do end end) end end', { instructionBudget: 100_000 });
    expect(caught(() => v.call('spin')).code).toBe('LUA_BUDGET_EXCEEDED');
  });

  it('given a runaway top level, when loading, then the budget stops the load', () => {
    const e = caught(() => vm('while true do end', { instructionBudget: 100_000 }));
    expect([e.code, e.fn]).toStrictEqual(['LUA_BUDGET_EXCEEDED', '<load>']);
  });

  it('given a budget error, when calling again, then the VM still works', () => {
    const v = vm('function spin() while true do end end function ok() return 1 end', { instructionBudget: 100_000 });
    caught(() => v.call('spin'));
    expect(v.call('ok')).toBe(1);
  });
});

describe('errors', () => {
  it('given a Lua error, when called, then LuaAdapterError carries code, adapter, function and Lua message with line', () => {
    const e = caught(() => vm('function boom()\n  error("bad thing")\nend').call('boom'));
    expect(e.code).toBe('LUA_RUNTIME_ERROR');
    expect(e.fn).toBe('boom');
    expect(e.detail).toBe('probe:2: bad thing');
  });

  it('given no such function, when called, then a clear missing-function error', () => {
    const e = caught(() => vm('x = 1').call('transform_request'));
    expect(e.code).toBe('LUA_MISSING_FUNCTION');
    expect(e.message).toContain('transform_request');
  });

  it('given an error that is a table with a __tostring that never returns, when called, then the error names its type and runs none of it', () => {
    const looping = vm('function f() error(setmetatable({}, { __tostring = function() while true do end end })) end');
    const e = caught(() => looping.call('f'));
    expect(e.code).toBe('LUA_RUNTIME_ERROR');
    expect(e.message).toContain('error() was given a table, not a message');
    // A message is still given as it is.
    expect(caught(() => vm('function f() error("plain words") end').call('f')).message).toContain('plain words');
  });

  it('given a syntax error, when loading, then LUA_LOAD_FAILED', () => {
    expect(caught(() => vm('function (')).code).toBe('LUA_LOAD_FAILED');
  });

  it('given a function result, when it is not JSON, then LUA_VALUE_NOT_JSON names the path', () => {
    const e = caught(() => vm('function f() return { a = { print } } end').call('f'));
    expect(e.code).toBe('LUA_VALUE_NOT_JSON');
    expect(e.detail).toContain('["a"][1]');
  });
});

/** JSON with every object's keys sorted (a Lua table keeps no order), __proto__ kept as the own key it is. */
const sortedJson = (value: unknown): string =>
  JSON.stringify(value, (_key, v: unknown) =>
    v !== null && typeof v === 'object' && !Array.isArray(v)
      ? Object.fromEntries(
          Object.keys(v)
            .sort()
            .map((key) => [key, (v as Record<string, unknown>)[key]]),
        )
      : v,
  );

describe('json', () => {
  const nested = { a: [1, [2, [3, []]], {}], b: { c: null, d: [null, true, false], e: 'é 中文 "q"\n' }, f: 2.5, g: -7, h: {} };

  it('given nested arrays, objects, empty arrays and null, when round-tripped JS → Lua → JS, then nothing changes', () => {
    expect(vm('function id(x) return x end').call('id', nested)).toStrictEqual(nested);
  });

  it('given the same value, when round-tripped through json.encode and json.decode inside Lua, then nothing changes', () => {
    const v = vm('function rt(x) return json.decode(json.encode(x)) end function enc(x) return json.encode(x) end');
    expect(v.call('rt', nested)).toStrictEqual(nested);
    expect(JSON.parse(v.call('enc', nested) as string)).toStrictEqual(nested);
  });

  it('given keys named __proto__ and constructor, when round-tripped, then they stay own keys with their values', () => {
    const keyed = JSON.parse('{"__proto__":"b","k__proto__":"c","constructor":{"__proto__":[1]}}') as unknown;
    const v = vm('function id(x) return x end function rt(s) return json.decode(s) end');
    for (const back of [v.call('id', keyed), v.call('rt', JSON.stringify(keyed))]) {
      expect(sortedJson(back)).toBe(sortedJson(keyed));
      expect(Object.hasOwn(back as object, '__proto__')).toBe(true);
      expect(Object.getPrototypeOf(back)).toBe(Object.prototype);
    }
  });

  it('given Lua-built tables, when returned, then json.array / json.object / json.null mark what a plain table cannot say', () => {
    const v = vm(`function f() return {
      plainEmpty = {}, emptyArray = json.array(), emptyObject = json.object(), list = {1, 2, 3},
      holey = json.array({[1] = "a", [3] = "c"}), nothing = json.null, numericKeys = json.object({[1] = "x"}) } end`);
    expect(v.call('f')).toStrictEqual({
      plainEmpty: {},
      emptyArray: [],
      emptyObject: {},
      list: [1, 2, 3],
      holey: ['a', null, 'c'],
      nothing: null,
      numericKeys: { '1': 'x' },
    });
  });

  it('given an ambiguous table, when returned, then a clear error instead of a guess', () => {
    expect(caught(() => vm('function f() return { 1, x = 2 } end').call('f')).detail).toContain('mixes number and string keys');
    expect(caught(() => vm('function f() return { [1] = 1, [5] = 5 } end').call('f')).detail).toContain('sparse');
  });

  it('given invalid JSON text, when decoded in Lua, then the Lua error says json.decode', () => {
    expect(caught(() => vm('function f() return json.decode("{nope") end').call('f')).detail).toContain('json.decode: invalid JSON');
  });

  it('given null from JS, when compared in Lua, then it equals json.null', () => {
    expect(vm('function f(x) return x.v == json.null end').call('f', { v: null })).toBe(true);
  });
});

describe('log', () => {
  it('given log and print calls, when run, then they reach the sink with level and adapter name', () => {
    const lines: string[] = [];
    vm('log("warn", "careful") print("hi", 2)', { log: (l, m, a) => lines.push(`${a}:${l}:${m}`) });
    expect(lines).toStrictEqual(['probe:warn:careful', 'probe:info:hi\t2']);
  });
});

describe('deeply nested values across the JSON boundary', () => {
  it('round-trips a value nested 60 levels deep (tool schemas nest deeply)', () => {
    const vm = new LuaVm({ name: 'deep', script: 'function id(x) return x end function enc(x) return json.encode(x) end' });
    const deep = (n: number): unknown => (n === 0 ? 'leaf' : { k: deep(n - 1) });
    expect(vm.call('id', deep(60))).toEqual(deep(60));
    expect(JSON.parse(vm.call('enc', deep(60)) as string)).toEqual(deep(60));
  });
});

describe('helpers every adapter shares', () => {
  it('json.present gives nil for json.null and the value otherwise', () => {
    const v = vm(`function probe(x) return { absent = json.present(json.null) == nil, kept = json.present(x) } end`);
    expect(v.call('probe', 'hi')).toStrictEqual({ absent: true, kept: 'hi' });
  });

  it('bearer adds the Authorization header only when an API key is set', () => {
    const v = vm(`function probe(config) return bearer(config, { ["Content-Type"] = "application/json" }) end`);
    expect(v.call('probe', { apiKey: 'k1' })).toStrictEqual({ 'Content-Type': 'application/json', Authorization: 'Bearer k1' });
    expect(v.call('probe', { apiKey: '' })).toStrictEqual({ 'Content-Type': 'application/json' });
    expect(v.call('probe', {})).toStrictEqual({ 'Content-Type': 'application/json' });
  });
});
