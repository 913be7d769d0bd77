/**
 * The pattern walk that prices a match (adapters/llm/luaMeter/patternSteps.ts) must take the same
 * path as fengari's own matcher, or the price would be of another match: on random patterns and
 * subjects it finds what string.find finds, counts what string.gsub counts, steps through gmatch
 * as gmatch does, and errs where the real one raises.
 */
import fc from 'fast-check';
import { lauxlib, lua, lualib, to_luastring } from 'fengari';
import { describe, expect, it } from 'vitest';
import { findSteps, GmatchWalk, gsubSteps, isPlainFind } from '../../adapters/llm/luaMeter/patternSteps.ts';

const L = lauxlib.luaL_newstate();
lauxlib.luaL_requiref(L, to_luastring('_G'), lualib.luaopen_base, 1);
lauxlib.luaL_requiref(L, to_luastring('string'), lualib.luaopen_string, 1);
lua.lua_pop(L, 2);

const bytes = (text: string): Uint8Array => to_luastring(text);

/** Runs `code` with S and P set; its results as numbers (nil as null), or 'error'. */
const lua53 = (code: string, subject: string, pattern: string): (number | null)[] | 'error' => {
  lua.lua_settop(L, 0);
  lua.lua_pushlstring(L, bytes(subject), bytes(subject).length);
  lua.lua_setglobal(L, to_luastring('S'));
  lua.lua_pushlstring(L, bytes(pattern), bytes(pattern).length);
  lua.lua_setglobal(L, to_luastring('P'));
  const chunk = to_luastring(code);
  if (lauxlib.luaL_loadbuffer(L, chunk, chunk.length, to_luastring('probe')) !== 0) throw new Error('probe did not load');
  if (lua.lua_pcall(L, 0, lua.LUA_MULTRET, 0) !== 0) return 'error';
  const results: (number | null)[] = [];
  for (let i = 1; i <= lua.lua_gettop(L); i++) {
    const n = lua.lua_tointegerx(L, i);
    results.push(n === false ? null : n);
  }
  return results;
};

const ATOMS = ['a', 'b', '(', ')', '()', '.', '%a', '%d', '%s', '%S', '[ab]', '[^a]', '[a-c]', '[%d(]', '%b()', '%f[a]', '%1', '%', '['];
const SUFFIXES = ['', '', '*', '+', '-', '?'];
const pattern = fc
  .tuple(fc.boolean(), fc.array(fc.tuple(fc.constantFrom(...ATOMS), fc.constantFrom(...SUFFIXES)), { maxLength: 6 }), fc.boolean())
  .map(([anchor, items, end]) => `${anchor ? '^' : ''}${items.map(([atom, suffix]) => atom + suffix).join('')}${end ? '$' : ''}`);
const subject = fc.array(fc.constantFrom('a', 'b', '(', ')', ' ', '1', 'c'), { maxLength: 12 }).map((chars) => chars.join(''));
const CEILING = 1e7;

/**
 * A back-reference to a position capture (`()a%1`): fengari compares it with length -2 and then
 * reads before the subject's start, giving matches that end before they begin and counts no C
 * Lua gives. The walk prices such a match as lstrlib would run it; it is not compared here.
 */
const backReferencesAPosition = (p: string): boolean => p.includes('()') && /%[1-9]/.test(p);

describe('the pattern walk follows Lua 5.3 (fengari)', () => {
  it('finds what string.find finds, and errs where it raises', () => {
    fc.assert(
      fc.property(subject, pattern, fc.integer({ min: 1, max: 4 }), (s, p, init) => {
        fc.pre(!backReferencesAPosition(p));
        const real = lua53(`return string.find(S, P, ${init})`, s, p);
        const walk = findSteps(bytes(s), bytes(p), Math.min(init, s.length + 1), CEILING);
        if (init > s.length + 1 || isPlainFind(bytes(p), false)) return;
        if (real === 'error') expect(walk.outcome).toBe('error');
        else if (real[0] === null) expect(walk.outcome).toBe('none');
        else expect([walk.start! + 1, walk.end]).toEqual(real.slice(0, 2));
      }),
      { numRuns: 3000 },
    );
  });

  it('counts the matches string.gsub counts', () => {
    fc.assert(
      fc.property(subject, pattern, fc.integer({ min: 0, max: 5 }), (s, p, max) => {
        fc.pre(!backReferencesAPosition(p));
        const real = lua53(`return select(2, string.gsub(S, P, '', ${max}))`, s, p);
        const walk = gsubSteps(bytes(s), bytes(p), max, CEILING);
        if (real === 'error') expect(walk.outcome).toBe('error');
        else expect(walk.count).toBe(real[0]);
      }),
      { numRuns: 3000 },
    );
  });

  it('steps through gmatch as gmatch does: the same matches, in order', () => {
    fc.assert(
      fc.property(subject, pattern, (s, p) => {
        fc.pre(!backReferencesAPosition(p));
        const real = lua53('local n = 0 for _ in string.gmatch(S, P) do n = n + 1 if n > 20 then break end end return n', s, p);
        const walk = new GmatchWalk(bytes(s), bytes(p));
        let found = 0;
        let last = walk.next(CEILING);
        while (last.outcome === 'found' && found <= 20) {
          found++;
          if (found > 20) break;
          last = walk.next(CEILING);
        }
        if (real === 'error') expect(last.outcome).toBe('error');
        else expect(found).toBe(real[0]);
      }),
      { numRuns: 3000 },
    );
  });
});

describe('the price of a match', () => {
  it('grows with the backtracking, not with the subject alone, and stops at the ceiling', () => {
    const subject = bytes('a'.repeat(30));
    const linear = findSteps(subject, bytes('a+b'), 1, CEILING);
    expect(linear.outcome).toBe('none');
    const exponential = findSteps(subject, bytes(`${'a*'.repeat(30)}b`), 1, CEILING);
    expect(exponential.outcome).toBe('ceiling');
    expect(exponential.steps).toBe(CEILING + 1);
    expect(linear.steps).toBeLessThan(2000);
  });

  it('prices a trim of a long line in proportion to the line', () => {
    const line = bytes(`  ${'word '.repeat(2000)}  `);
    const trim = findSteps(line, bytes('^%s*(.-)%s*$'), 1, CEILING);
    expect(trim.outcome).toBe('found');
    expect(trim.steps).toBeLessThan(line.length * 40);
  });
});
