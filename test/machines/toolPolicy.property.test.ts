/**
 * The tool policy against random rule sets, principals and tool names: deny always wins in any
 * layer (settings, the principal's own rules, its plugin profile), an allow list lets through only
 * what it names, a hard-private tool is never allowed to a principal that is not the owner or the
 * kernel, and every refusal says which rule refused. Checked against a plain restatement of the
 * globs (a name matches `a*b` when it starts with a, ends with b and is long enough).
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  applyPolicy,
  decideTool,
  decideToolFor,
  globMatches,
  HARD_PRIVATE_TOOLS,
  INTERNAL,
  OWNER,
  type PrincipalOf,
  rulesMatchingNoTool,
  type SecurityPolicy,
  type ToolRules,
} from '../../machines/security/index.ts';

const name = fc.stringMatching(/^[a-c_]{1,6}$/);
const glob = fc.stringMatching(/^[a-c_*?]{1,5}$/);
const rules: fc.Arbitrary<ToolRules> = fc.record(
  { allow: fc.array(glob, { maxLength: 3 }), deny: fc.array(glob, { maxLength: 3 }), approve: fc.array(glob, { maxLength: 2 }) },
  { requiredKeys: [] },
);

/** Tool names: plain ones, and the hard-private ones (or names their globs match). */
const hardPrivateNames = [
  'memory_purge',
  'memory_edit',
  'memory_merge',
  'memory_delete_entity',
  'secret_get',
  'settings_set',
  'plugin_reload',
  'plugins_x',
  'vault_open',
  'secrets_',
];
const toolName = fc.oneof(name, fc.constantFrom(...hardPrivateNames));
const principalName = fc.constantFrom(OWNER, INTERNAL, 'qq.owner', 'qq.guest', 'spy', 'timer.x');
const principal: fc.Arbitrary<PrincipalOf> = fc.record({ name: principalName, profile: rules }, { requiredKeys: ['name'] });
const policy: fc.Arbitrary<SecurityPolicy> = fc.record(
  {
    tools: rules,
    principals: fc.dictionary(principalName, rules, { maxKeys: 3 }),
    owners: fc.subarray(['qq.owner', 'qq.guest', 'spy']),
  },
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

  it('lets a tool through exactly when no deny rule names it and, with an allow list (an empty one too), one of it does', () => {
    fc.assert(
      fc.property(rules, name, (r, n) => {
        const verdict = decideTool(r, n);
        const denied = (r.deny ?? []).some((g) => plainMatch(g, n));
        const allowed = r.allow === undefined || r.allow.some((g) => plainMatch(g, n));
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
      fc.property(policy, principal, fc.uniqueArray(toolName, { maxLength: 6 }), (p, who, names) => {
        const tools = names.map((n) => ({ name: n, owner: 'p', origin: 'plugin' as const, description: '', parameters: {} }));
        const { tools: kept, refused, approve } = applyPolicy(tools, p, who);
        expect([...kept.map((t) => t.name), ...refused.map((t) => t.name)].sort()).toEqual([...names].sort());
        for (const t of kept) expect(decideToolFor(p, who, t.name).allowed).toBe(true);
        for (const t of refused) expect(decideToolFor(p, who, t.name)).toEqual({ allowed: false, reason: t.reason });
        for (const t of approve) expect(kept.map((k) => k.name)).toContain(t.name);
      }),
    );
  });
});

describe('the tool policy by principal', () => {
  it('allows a tool exactly when every layer (settings, the principal, its profile) does; a deny in any layer wins', () => {
    fc.assert(
      fc.property(policy, principal, toolName, (p, who, n) => {
        const layers = [p.tools ?? {}, p.principals?.[who.name] ?? {}, who.profile ?? {}];
        const passes = layers.every(
          (r) => !(r.deny ?? []).some((g) => plainMatch(g, n)) && (r.allow === undefined || r.allow.some((g) => plainMatch(g, n))),
        );
        const privileged = who.name === OWNER || who.name === INTERNAL || (p.owners ?? []).includes(who.name);
        const hardPrivate = HARD_PRIVATE_TOOLS.some((g) => plainMatch(g, n));
        expect(decideToolFor(p, who, n).allowed).toBe(passes && (privileged || !hardPrivate));
      }),
      { numRuns: 3000 },
    );
  });

  it('never allows a hard-private tool to a principal that is neither the owner, the kernel, nor vouched for', () => {
    fc.assert(
      fc.property(policy, principal, fc.constantFrom(...hardPrivateNames), (p, who, n) => {
        fc.pre(who.name !== OWNER && who.name !== INTERNAL && !(p.owners ?? []).includes(who.name));
        // Whatever the rules allow, even naming the tool in every allow list.
        const generous = { ...p, tools: { allow: [n, '*'] }, principals: { [who.name]: { allow: ['*'] } } };
        expect(decideToolFor(generous, { ...who, profile: { allow: ['*'] } }, n).allowed).toBe(false);
        expect(decideToolFor(p, who, n).allowed).toBe(false);
      }),
      { numRuns: 2000 },
    );
  });

  it('a deny in any layer refuses the tool even to the owner', () => {
    fc.assert(
      fc.property(policy, principal, toolName, fc.integer({ min: 0, max: 2 }), (p, who, n, layer) => {
        const denied: SecurityPolicy =
          layer === 0
            ? { ...p, tools: { ...p.tools, deny: [...(p.tools?.deny ?? []), n] } }
            : layer === 1
              ? { ...p, principals: { ...p.principals, [who.name]: { deny: [n] } } }
              : p;
        const profile = layer === 2 ? { ...who.profile, deny: [n] } : who.profile;
        expect(decideToolFor(denied, { name: who.name, ...(profile ? { profile } : {}) }, n).allowed).toBe(false);
      }),
    );
  });

  it('asks for approval exactly when an allowed tool matches some layer’s approve list', () => {
    fc.assert(
      fc.property(policy, principal, toolName, (p, who, n) => {
        const verdict = decideToolFor(p, who, n);
        if (!verdict.allowed) return;
        const layers = [p.tools ?? {}, p.principals?.[who.name] ?? {}, who.profile ?? {}];
        expect(verdict.approval !== undefined).toBe(layers.some((r) => (r.approve ?? []).some((g) => plainMatch(g, n))));
      }),
      { numRuns: 2000 },
    );
  });

  it('reports a rule exactly when it matches none of the tools, where it stands', () => {
    fc.assert(
      fc.property(rules, fc.array(toolName, { maxLength: 6 }), (layer, tools) => {
        const reported = rulesMatchingNoTool([{ where: 'security.tools', rules: layer }], tools);
        const expected = (['allow', 'deny', 'approve'] as const).flatMap((list) =>
          (layer[list] ?? []).filter((g) => !tools.some((t) => plainMatch(g, t))).map((g) => `security.tools.${list} ${g}`),
        );
        expect(reported.map((r) => `${r.where} ${r.glob}`)).toEqual(expected);
        for (const r of reported) for (const near of r.closest) expect(tools).toContain(near);
      }),
      { numRuns: 1000 },
    );
  });
});
