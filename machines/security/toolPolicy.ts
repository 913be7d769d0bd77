/**
 * Which tools a turn may offer and run, from `security.tools` in settings: names and globs (`*`
 * any run of characters, `?` one) to `allow` (when given, only those) and to `deny`; deny always
 * wins. A refused tool is taken out of what the model is offered, and a call to it anyway is
 * answered with the reason. Pure: the same rules and names give the same verdicts.
 */
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

/** Globs as patterns, made once each (globs come from settings, manifests and the vault: a few dozen). */
const globPatterns = new Map<string, RegExp>();

/** Whether `glob` names `name`: `*` any run of characters, `?` one; anything else literally. */
export const globMatches = (glob: string, name: string): boolean => {
  let pattern = globPatterns.get(glob);
  if (!pattern) {
    const source = glob
      .split('')
      .map((c) => (c === '*' ? '.*' : c === '?' ? '.' : escapeRegExp(c)))
      .join('');
    pattern = new RegExp(`^${source}$`, 's');
    if (globPatterns.size < 1_000) globPatterns.set(glob, pattern);
  }
  return pattern.test(name);
};

/** One layer of rules on its own; `where` names the layer in the reason (a settings path, a profile). */
export const decideTool = (rules: ToolRules, name: string, where = 'security.tools'): ToolVerdict => {
  const denied = (rules.deny ?? []).find((glob) => globMatches(glob, name));
  if (denied !== undefined) return { allowed: false, reason: `${where}.deny has '${denied}'` };
  const allow = rules.allow ?? [];
  if (allow.length > 0 && !allow.some((glob) => globMatches(glob, name))) {
    return { allowed: false, reason: `it is not in ${where}.allow (${allow.join(', ')})` };
  }
  return { allowed: true };
};
