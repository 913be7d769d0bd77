/**
 * A manifest's `profiles`: the principals a plugin may inject inputs as, each with the tool
 * rules that hold for them (`{"qq.guest": {"deny": ["files_*"]}}`). A name starts with the
 * plugin's own name and a dot, so a plugin cannot speak as the owner, the kernel or another
 * plugin; every problem is listed, nothing is dropped silently.
 */
import type { PluginProfiles } from '../sdk/manifestTypes.ts';

const RULE_KEYS = ['allow', 'deny', 'approve'] as const;
const PROFILE_NAME = /^[a-z0-9_-]{1,40}$/;
/** The most profiles one manifest declares: a few (a guest, a member, an admin); each is a principal the daemon keeps books for. */
export const MOST_PROFILES = 16;

export const parseProfiles = (value: unknown, plugin: string | undefined, problems: string[]): PluginProfiles | undefined => {
  if (value === undefined) return undefined;
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    problems.push(
      `"profiles" must be an object of profile name → { allow, deny, approve } lists, e.g. {"${plugin ?? 'qq'}.guest": {"deny": ["files_*"]}}`,
    );
    return undefined;
  }
  const profiles: Record<string, Record<string, string[]>> = {};
  const declared = Object.keys(value).length;
  if (declared > MOST_PROFILES) {
    problems.push(`"profiles" declares ${declared} profiles; a plugin declares at most ${MOST_PROFILES} (a guest, a member, an admin…)`);
    return undefined;
  }
  for (const [name, rules] of Object.entries(value)) {
    const [owner, rest, ...more] = name.split('.');
    if (owner !== plugin || rest === undefined || more.length > 0 || !PROFILE_NAME.test(rest)) {
      problems.push(`profile "${name}" must be named "${plugin ?? '<name>'}.<profile>" (lowercase letters, digits, '_' or '-')`);
      continue;
    }
    if (typeof rules !== 'object' || rules === null || Array.isArray(rules)) {
      problems.push(`profile "${name}" must be an object with allow, deny or approve lists`);
      continue;
    }
    const checked: Record<string, string[]> = {};
    for (const [key, list] of Object.entries(rules)) {
      if (!(RULE_KEYS as readonly string[]).includes(key)) {
        problems.push(`profile "${name}" has "${key}", which is not one of ${RULE_KEYS.join(', ')}`);
      } else if (!Array.isArray(list) || list.some((g) => typeof g !== 'string' || g === '')) {
        problems.push(`profile "${name}".${key} must be a list of tool names or globs`);
      } else checked[key] = [...list];
    }
    profiles[name] = checked;
  }
  return profiles;
};
