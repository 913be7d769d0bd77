/**
 * Which tools a turn may offer and run, from `security.tools` in settings: names and globs (`*`
 * any run of characters, `?` one) to `allow` (when given, only those; an empty list, none) and to `deny`; deny always
 * wins. A refused tool is taken out of what the model is offered, and a call to it anyway is
 * answered with the reason. Pure: the same rules and names give the same verdicts.
 */
import { closestNames } from '../../events/index.ts';

export type ToolRules = Readonly<{
  allow?: readonly string[];
  deny?: readonly string[];
  /** Tools a person must approve, call by call, before they run. */
  approve?: readonly string[];
}>;

export type ToolVerdict = Readonly<{ allowed: true }> | Readonly<{ allowed: false; reason: string }>;

/** A tool the policy refused, and why (what the model is told if it calls it). */
export type RefusedTool = Readonly<{ name: string; reason: string }>;

const escapeRegExp = (text: string): string => text.replace(/[.+^${}()|[\]\\]/g, '\\$&');

type NameTest = (name: string) => boolean;

/** Globs as tests, made once each (globs come from settings, manifests and the vault: a few dozen). */
const globTests = new Map<string, NameTest>();

/** A glob as a test: a plain name or a `prefix*` compares strings; anything else becomes a pattern. */
const testOf = (glob: string): NameTest => {
  const star = glob.indexOf('*');
  if (!glob.includes('?') && (star < 0 || star === glob.length - 1)) {
    if (star < 0) return (name) => name === glob;
    const prefix = glob.slice(0, -1);
    return (name) => name.startsWith(prefix);
  }
  const source = glob
    .split('')
    .map((c) => (c === '*' ? '.*' : c === '?' ? '.' : escapeRegExp(c)))
    .join('');
  const pattern = new RegExp(`^${source}$`, 's');
  return (name) => pattern.test(name);
};

/** Whether `glob` names `name`: `*` any run of characters, `?` one; anything else literally. */
export const globMatches = (glob: string, name: string): boolean => {
  let test = globTests.get(glob);
  if (!test) {
    test = testOf(glob);
    if (globTests.size < 1_000) globTests.set(glob, test);
  }
  return test(name);
};

/** One layer of rules on its own; `where` names the layer in the reason (a settings path, a profile). */
export const decideTool = (rules: ToolRules, name: string, where = 'security.tools'): ToolVerdict => {
  const denied = (rules.deny ?? []).find((glob) => globMatches(glob, name));
  if (denied !== undefined) return { allowed: false, reason: `${where}.deny has '${denied}'` };
  // An empty list allows nothing: a principal locked down with `allow: []` must not be let through everything.
  const { allow } = rules;
  if (allow !== undefined && !allow.some((glob) => globMatches(glob, name))) {
    return { allowed: false, reason: `it is not in ${where}.allow (${allow.join(', ') || 'empty: no tool'})` };
  }
  return { allowed: true };
};

/** A rule of the policy that names no tool there is: most likely a typo, and an allow, deny or approve that never applies. */
export type UnmatchedRule = Readonly<{ where: string; glob: string; closest: readonly string[] }>;

const RULE_LISTS = ['allow', 'deny', 'approve'] as const;

/** The globs of `globs` that match none of `tools`, each with the tool names nearest to it: most likely typos. */
export const globsMatchingNoTool = (
  globs: readonly string[],
  tools: readonly string[],
): Readonly<{ glob: string; closest: readonly string[] }>[] =>
  globs
    .filter((glob) => !tools.some((tool) => globMatches(glob, tool)))
    .map((glob) => ({ glob, closest: closestNames(glob.replaceAll('*', ''), tools, 3) }));

/** The rules of `layers` (a settings path each) that match none of `tools`, each with the tool names nearest to it. */
export const rulesMatchingNoTool = (
  layers: readonly Readonly<{ where: string; rules: ToolRules }>[],
  tools: readonly string[],
): UnmatchedRule[] =>
  layers.flatMap(({ where, rules }) =>
    RULE_LISTS.flatMap((list) =>
      globsMatchingNoTool(rules[list] ?? [], tools).map((unmatched) => ({ where: `${where}.${list}`, ...unmatched })),
    ),
  );
