/**
 * The tool policy against random rule sets and tool names: deny always wins, an allow list lets
 * through only what it names, the verdict depends on nothing else, and every refusal says which
 * rule refused. Checked against a plain restatement of the globs (a name matches `a*b` when it
 * starts with a, ends with b and is long enough).
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { applyToolRules, decideTool, globMatches, type ToolRules } from '../../machines/security/index.ts';

const name = fc.stringMatching(/^[a-c_]{1,6}$/);
const glob = fc.stringMatching(/^[a-c_*?]{1,5}$/);
const rules: fc.Arbitrary<ToolRules> = fc.record(
  { allow: fc.array(glob, { maxLength: 3 }), deny: fc.array(glob, { maxLength: 3 }) },
  { requiredKeys: [] },
);

/** The same globs by backtracking over characters, written without regular expressions. */
const plainMatch = (g: string, n: string): boolean => {
  if (g === '') return n === '';
  if (g[0] === '*') return plainMatch(g.slice(1), n) || (n !== '' && plainMatch(g, n.slice(1)));
  if (n === '') return false;
  return (g[0] === '?' || g[0] === n[0]) && plainMatch(g.slice(1), n.slice(1));
};

describe('the tool policy', () => {
  it('matches globs as a plain matcher does', () => {
    fc.assert(
      fc.property(glob, name, (g, n) => {
        expect(globMatches(g, n)).toBe(plainMatch(g, n));
      }),
      { numRuns: 2000 },
    );
  });

  it('lets a tool through exactly when no deny rule names it and, with an allow list, one of it does', () => {
    fc.assert(
      fc.property(rules, name, (r, n) => {
        const verdict = decideTool(r, n);
        const denied = (r.deny ?? []).some((g) => plainMatch(g, n));
        const allowed = (r.allow ?? []).length === 0 || (r.allow ?? []).some((g) => plainMatch(g, n));
        expect(verdict.allowed).toBe(!denied && allowed);
        if (!verdict.allowed) expect(verdict.reason).toMatch(denied ? /^security\.tools\.deny has '/ : /security\.tools\.allow/);
      }),
      { numRuns: 2000 },
    );
  });

  it('deny always wins: adding a deny for a tool refuses it whatever the allow list says', () => {
    fc.assert(
      fc.property(rules, name, (r, n) => {
        const verdict = decideTool({ allow: [...(r.allow ?? []), n], deny: [...(r.deny ?? []), n] }, n);
        expect(verdict.allowed).toBe(false);
      }),
    );
  });

  it('splits a toolset into what stays and what is refused, losing and inventing nothing', () => {
    fc.assert(
      fc.property(rules, fc.uniqueArray(name, { maxLength: 6 }), (r, names) => {
        const tools = names.map((n) => ({ name: n, owner: 'p', origin: 'plugin' as const, description: '', parameters: {} }));
        const { tools: kept, refused } = applyToolRules(tools, r);
        expect([...kept.map((t) => t.name), ...refused.map((t) => t.name)].sort()).toEqual([...names].sort());
        for (const t of kept) expect(decideTool(r, t.name).allowed).toBe(true);
        for (const t of refused) expect(decideTool(r, t.name)).toEqual({ allowed: false, reason: t.reason });
      }),
    );
  });
});
