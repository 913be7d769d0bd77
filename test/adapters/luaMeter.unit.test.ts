/**
 * The memory ceiling and instruction budget of a Lua VM, against the ways a script can take
 * memory or time: doubling a string, the library functions that build much more than they are
 * given, tables, deep calls, a value shared many times at the JSON boundary, and loops that run
 * inside one library call. Each is stopped with a typed error, with the VM's heap never past the
 * ceiling; ordinary work under the ceiling runs untouched.
 */
import { describe, expect, it } from 'vitest';
import { LuaVm } from '../../adapters/llm/luaVm.ts';
import { measureHeap, SIZES } from '../../adapters/llm/luaMeter/index.ts';
import { caught } from '../support/llmFixtures.ts';

const MB = 1024 * 1024;
const LIMIT = 16 * MB;

const vm = (script: string, memoryLimitBytes = LIMIT, instructionBudget?: number) =>
  new LuaVm({ name: 'probe', script, memoryLimitBytes, ...(instructionBudget === undefined ? {} : { instructionBudget }) });

/** The refusal itself (its message string, the unwound frames) is made after the last check. */
const SLACK = 4 * 1024;

/** Calls `fn`, expects the memory error, and that the heap stayed under the ceiling. */
const expectMemoryStop = (v: LuaVm, fn: string) => {
  const error = caught(() => v.call(fn));
  expect(error.code, `${fn}: ${error.message}`).toBe('LUA_MEMORY_EXCEEDED');
  expect(error.message).toContain(`used more than ${v.memoryLimitBytes / MB} MB`);
  expect(v.heapBytes(), fn).toBeLessThanOrEqual(v.memoryLimitBytes + SLACK);
  return error;
};

describe('the memory ceiling', () => {
  it('stops a string doubled forty times (4 TB) at the ceiling, in a few instructions', () => {
    const v = vm("function bomb() s = 'x'; for i = 1, 40 do s = s .. s end return #s end", 64 * MB);
    expectMemoryStop(v, 'bomb');
    // The last string that fitted is still held (s is a global): 32 MB, and not one doubling more.
    expect(v.heapBytes()).toBeGreaterThan(32 * MB);
    expect(v.heapBytes()).toBeLessThan(40 * MB);
  });

  it('cannot be swallowed with pcall: no instruction after the refusal runs', () => {
    const lines: string[] = [];
    const v = new LuaVm({
      name: 'probe',
      memoryLimitBytes: LIMIT,
      log: (_level, message) => lines.push(message),
      script: `function bomb()
        local ok = pcall(function() local s = 'x'; for i = 1, 40 do s = s .. s end end)
        log('info', 'swallowed it and went on')
        return "swallowed"
      end
      function spin()
        pcall(function() local s = 'x'; for i = 1, 40 do s = s .. s end end)
        local n = 0
        while true do n = n + 1 end
      end`,
    });
    expectMemoryStop(v, 'bomb');
    expect(lines).toEqual([]);
    v.reset();
    expectMemoryStop(v, 'spin'); // stopped at once, not by the instruction budget
  });

  it('stops string.rep, format, gsub, pack and table.concat before they build past it', () => {
    const v = vm(`
      local mb = string.rep('x', 1024 * 1024)
      function rep() return #string.rep('x', 2^30) end
      function format() return #string.format(string.rep('%s', 40), table.unpack((function() local t = {} for i = 1, 40 do t[i] = mb end return t end)())) end
      function quoted() return #string.format(string.rep('%q', 10), mb, mb, mb, mb, mb, mb, mb, mb, mb, mb) end
      function gsub_string() return #string.gsub(string.rep('a', 1000), 'a', mb) end
      function gsub_function() return #string.gsub(string.rep('a', 1000), 'a', function() return mb end) end
      function gsub_table() return #string.gsub(string.rep('a', 1000), 'a', { a = mb }) end
      function gsub_captures() return #string.gsub(mb, '(x)', '%1%1%1%1%1%1%1%1%1%1%1%1%1%1%1%1%1%1%1%1') end
      function pack() return #string.pack('c1000000000', '') end
      function concat() local t = {} for i = 1, 100 do t[i] = mb end return #table.concat(t) end
      function concat_proxy() return #table.concat(setmetatable({}, { __index = function() return mb end }), '', 1, 100) end
    `);
    for (const fn of [
      'rep',
      'format',
      'quoted',
      'gsub_string',
      'gsub_function',
      'gsub_table',
      'gsub_captures',
      'pack',
      'concat',
      'concat_proxy',
    ]) {
      expectMemoryStop(v, fn);
      v.reset();
    }
  });

  it('stops captures, gmatch and string methods that copy a big subject too often', () => {
    const v = vm(`
      local mb = string.rep('x', 1024 * 1024)
      function keep(f) local t = {} for i = 1, 100 do t[i] = f() end return #t end
      function upper() return keep(function() return mb:upper() end) end
      function sub() return keep(function() return mb:sub(2) end) end
      function nested() local p = string.rep('(', 30) .. '.*' .. string.rep(')', 30) return select('#', mb:match(p)) end
      function gmatch() local t = {} for w in (mb .. ' '):rep(20):gmatch('(x+)') do t[#t + 1] = w end return #t end
    `);
    for (const fn of ['upper', 'sub', 'nested', 'gmatch']) {
      expectMemoryStop(v, fn);
      v.reset();
    }
  });

  it('counts tables, closures, string keys and deep calls', () => {
    const v = vm(
      `
      function tables() t = {} for i = 1, 10000000 do t[i] = {} end end
      function closures() t = {} for i = 1, 10000000 do t[i] = function() return i end end end
      function keys() local k = string.rep('k', 4 * 1024 * 1024) t = {} t[k] = 1 t[k .. 'a'] = 1 t[k .. 'b'] = 1 end
      function deep(n) local a, b, c, d, e, f, g, h = 1, 2, 3, 4, 5, 6, 7, 8 return deep(n + 1) + a end
      function unpacked() local t = {} for i = 1, 30 do t[i] = i end return #{ table.unpack(t, 1, 900000) } end
    `,
      LIMIT,
      100_000_000,
    );
    for (const fn of ['tables', 'closures', 'keys', 'unpacked']) {
      expectMemoryStop(v, fn);
      v.reset(); // what the bomb left in globals would fill the next one's room
    }
    const deep = caught(() => v.call('deep', 1));
    // Lua's own stack limit may come first; either way the heap stayed under the ceiling.
    expect(['LUA_MEMORY_EXCEEDED', 'LUA_RUNTIME_ERROR']).toContain(deep.code);
    expect(v.heapBytes()).toBeLessThanOrEqual(LIMIT + SLACK);
  });

  it('bounds what crosses to JS: a table shared in a chain (2^60 nodes as JSON), and arguments too big to push', () => {
    const v = vm(`
      function dag() local t = { 1 } for i = 1, 60 do t = { t, t } end return t end
      function encode() local t = { 1 } for i = 1, 60 do t = { t, t } end return json.encode(t) end
      function decode() return json.decode('[' .. string.rep('[1,2,3],', 400000) .. '1]') end
      function echo(x) return #x end
    `);
    expect(caught(() => v.call('dag')).message).toContain('larger than');
    expect(caught(() => v.call('encode')).message).toContain('larger than');
    expectMemoryStop(v, 'decode');
    expect(caught(() => v.call('echo', 'y'.repeat(8 * MB))).code).toBe('LUA_MEMORY_EXCEEDED');
  });

  it('is deterministic: the same bomb stops with the same heap every time', () => {
    const run = () => {
      const v = vm('function bomb() t = {} for i = 1, 10000000 do t[#t + 1] = "s" .. i end end function count() return #t end');
      caught(() => v.call('bomb'));
      return [v.call('count'), v.heapBytes()];
    };
    expect(run()).toEqual(run());
  });

  it('is released by reset: the script is loaded again into a fresh state', () => {
    const v = vm("function bomb() s = 'x'; for i = 1, 40 do s = s .. s end end function size() return s and #s or 0 end");
    const fresh = v.heapBytes();
    expectMemoryStop(v, 'bomb');
    expect(v.call('size')).toBe(8 * MB);
    v.reset();
    expect(v.call('size')).toBe(0);
    expect(v.heapBytes()).toBe(fresh);
  });

  it('lets ordinary work under the ceiling run as before', () => {
    const v = vm(
      `
      function build() local t = {} for i = 1, 20000 do t[i] = 'line ' .. i end return #table.concat(t, '\\n') end
      function grow() local s = '' for i = 1, 3000 do s = s .. 'abcdefghij' end return #s end
      function squash(text) return (text:gsub('%s+', ' ')) end
      function words(text) local n = 0 for _ in text:gmatch('%S+') do n = n + 1 end return n end
      function roundtrip(text) return json.encode(json.decode(text)) end
      function formatted() return string.format('%5.2f %s %q %d', 3.14159, 'a', 'b\\n', 42) end
      function wrapped(text) return (text:gsub('(%w+)', '<%1>')) end
    `,
      LIMIT,
      20_000_000,
    );
    const text = 'the quick  brown\tfox '.repeat(20_000);
    const lines = Array.from({ length: 20_000 }, (_, i) => `line ${i + 1}`).join('\n');
    expect(v.call('build')).toBe(lines.length);
    expect(v.call('grow')).toBe(30_000);
    expect(v.call('squash', text)).toBe('the quick brown fox '.repeat(20_000));
    expect(v.call('words', text)).toBe(80_000);
    const json = JSON.stringify(Array.from({ length: 5_000 }, (_, i) => ({ i, name: `n${i}` })));
    expect(v.call('roundtrip', json)).toBe(json);
    expect(v.call('formatted')).toBe(' 3.14 a "b\\\n" 42');
    expect(v.call('wrapped', 'ab cd')).toBe('<ab> <cd>');
  });
});

describe('the instruction budget inside library calls', () => {
  it('stops a loop that runs inside one library call', () => {
    const v = vm(`
      function rep() return #string.rep('', 2^31 - 1) end
      function move() return #table.move({}, 1, 2^31 - 1, 1) end
      function concat() return #table.concat(setmetatable({}, { __index = function() return '' end }), '', 1, 2^31 - 1) end
    `);
    for (const fn of ['rep', 'move', 'concat']) expect(caught(() => v.call(fn)).code).toBe('LUA_BUDGET_EXCEEDED');
  });

  it('stops a pattern that backtracks exponentially before it starts, in find, match, gmatch and gsub, also under pcall', () => {
    const v = vm(`
      local subject, pattern = ('a'):rep(30), ('a*'):rep(5) .. 'b'
      function find() return string.find(subject, pattern) end
      function match() return string.match(subject, '(' .. pattern .. ')') end
      function gmatch() for w in subject:gmatch(pattern) do end end
      function gsub() return (subject:gsub(pattern, 'x')) end
      function guarded() local ok = pcall(string.find, subject, pattern) return ok end
    `);
    // About 7 million steps each (twice the budget's worth); with ('a*'):rep(30) it would be longer than the universe has existed.
    for (const fn of ['find', 'match', 'gmatch', 'gsub', 'guarded']) expect(caught(() => v.call(fn)).code, fn).toBe('LUA_BUDGET_EXCEEDED');
  });

  it('lets ordinary matching through: a trim, words and a replacement over a 100 KB text', () => {
    const v = vm(`
      function work(text)
        local trimmed = text:match('^%s*(.-)%s*$')
        local words = 0
        for _ in trimmed:gmatch('%a+') do words = words + 1 end
        local dashed = trimmed:gsub('%s+', '-')
        return words .. ' ' .. #dashed .. ' ' .. tostring(trimmed:find('word', 1, true))
      end
    `);
    expect(v.call('work', `  ${'word '.repeat(20_000)}  `)).toBe(`20000 ${20_000 * 5 - 1} 1`);
  });

  it('removes string.dump (no use without load)', () => {
    expect(vm('function f() return type(string.dump) end').call('f')).toBe('nil');
  });
});

describe('the wall-clock limit', () => {
  it('stops a call that runs past it (on an injected clock), and the next call has a fresh one', () => {
    let clock = 0;
    const v = new LuaVm({
      name: 'probe',
      timeLimitMs: 100,
      now: () => (clock += 1), // a millisecond passes at every look
      script: 'function spin() local x = 0 for i = 1, 1500000 do x = x + 1 end return x end function quick() return 1 end',
    });
    const error = caught(() => v.call('spin'));
    expect(error.code).toBe('LUA_TIME_EXCEEDED');
    expect(error.message).toContain('ran for more than 100 ms');
    expect(v.call('quick')).toBe(1);
  });

  it('leaves a call alone that stays within it', () => {
    let clock = 0;
    const v = new LuaVm({
      name: 'probe',
      timeLimitMs: 1_000,
      now: () => (clock += 1),
      script: 'function spin() local x = 0 for i = 1, 100000 do x = x + 1 end return x end',
    });
    expect(v.call('spin')).toBe(100_000);
  });
});

describe('measureHeap', () => {
  it('counts each object once, by what it holds', () => {
    const v = vm("t = {} local s = string.rep('z', 100000) for i = 1, 1000 do t[i] = s end function f() end");
    const base = vm('function f() end').heapBytes();
    const expected = SIZES.TABLE + 1000 * SIZES.ENTRY + SIZES.STRING + 100_000;
    const extra = v.heapBytes() - base;
    // The script's own function and constants add a little on top.
    expect(extra).toBeGreaterThanOrEqual(expected);
    expect(extra).toBeLessThan(expected + 8 * 1024);
    expect(measureHeap).toBeTypeOf('function');
  });
});
