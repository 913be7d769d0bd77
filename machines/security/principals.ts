/**
 * The tool policy for one principal: who sent an input decides which tools its turn may use.
 * Rules come in layers (settings' `security.tools`, then `security.principals.<principal>`, then
 * the plugin profile the input was injected under); a tool must pass every layer, a deny in any
 * layer wins, and hard-private tools (settings, secrets, plugin management, memory admin) are
 * refused to every principal but the owner and the kernel itself. Pure.
 */
import type { RegisteredTool } from '../../events/index.ts';
import { decideTool, globMatches, type RefusedTool, type ToolRules } from './toolPolicy.ts';

/** The person at the machine (the cli). */
export const OWNER = 'owner';
/** The kernel itself (timers it set, work it schedules). */
export const INTERNAL = 'internal';

/** Tools only the owner and the kernel may use, whatever the rules say. */
export const HARD_PRIVATE_TOOLS: readonly string[] = [
  'settings_*',
  'secret_*',
  'secrets_*',
  'vault_*',
  'plugin_*',
  'plugins_*',
  'memory_merge',
  'memory_purge',
  'memory_edit',
  'memory_delete_entity',
];

/** `security` in settings, as far as tools go. */
export type SecurityPolicy = Readonly<{
  tools?: ToolRules;
  /** Rules for one principal, by name. */
  principals?: Readonly<Record<string, ToolRules>>;
  /** Plugin-declared principals the owner vouches for (a plugin cannot make itself the owner). */
  owners?: readonly string[];
}>;

/** Who an input is from, and the rules of the plugin profile it came in under (if any). */
export type PrincipalOf = Readonly<{ name: string; profile?: ToolRules }>;

export type PolicyVerdict = Readonly<{ allowed: true; approval?: string }> | Readonly<{ allowed: false; reason: string }>;

/** Whether `principal` is the owner or the kernel itself. */
export const isOwnerOrInternal = (principal: string | undefined): boolean => principal === OWNER || principal === INTERNAL;

/** Whether `principal` may use hard-private tools. */
export const isPrivileged = (policy: SecurityPolicy, principal: string): boolean =>
  isOwnerOrInternal(principal) || (policy.owners ?? []).includes(principal);

export const isHardPrivate = (name: string): boolean => HARD_PRIVATE_TOOLS.some((glob) => globMatches(glob, name));

const layersOf = (policy: SecurityPolicy, principal: PrincipalOf): [ToolRules, string][] => {
  const layers: [ToolRules, string][] = [[policy.tools ?? {}, 'security.tools']];
  const own = policy.principals && Object.hasOwn(policy.principals, principal.name) ? policy.principals[principal.name] : undefined;
  if (own) layers.push([own, `security.principals.${principal.name}`]);
  if (principal.profile) layers.push([principal.profile, `profile ${principal.name}`]);
  return layers;
};

/**
 * Verdicts reached already, by policy, then profile (the policy itself standing for none), then
 * principal and tool: a policy is settings, fixed while it is used, so a question has one answer.
 */
const verdicts = new WeakMap<SecurityPolicy, WeakMap<object, Map<string, PolicyVerdict>>>();
/** Past this many verdicts for one policy and profile, they are forgotten and reached again. */
const VERDICTS_KEPT = 4_096;

/** Whether `principal` may use the tool `name` under `policy`, and, when it may, whether each call waits for approval. */
export const decideToolFor = (policy: SecurityPolicy, principal: PrincipalOf, name: string): PolicyVerdict => {
  let byProfile = verdicts.get(policy);
  if (!byProfile) {
    byProfile = new WeakMap();
    verdicts.set(policy, byProfile);
  }
  const profileKey = principal.profile ?? policy;
  let known = byProfile.get(profileKey);
  if (!known) {
    known = new Map();
    byProfile.set(profileKey, known);
  }
  const key = `${principal.name}\u0000${name}`;
  let verdict = known.get(key);
  if (verdict === undefined) {
    if (known.size >= VERDICTS_KEPT) known.clear();
    verdict = reachVerdict(policy, principal, name);
    known.set(key, verdict);
  }
  return verdict;
};

const reachVerdict = (policy: SecurityPolicy, principal: PrincipalOf, name: string): PolicyVerdict => {
  if (isHardPrivate(name) && !isPrivileged(policy, principal.name)) {
    return { allowed: false, reason: `'${name}' is hard-private: only the owner may use it, and this input is from ${principal.name}` };
  }
  const layers = layersOf(policy, principal);
  for (const [rules, where] of layers) {
    const verdict = decideTool(rules, name, where);
    if (!verdict.allowed) return verdict;
  }
  for (const [rules, where] of layers) {
    const glob = (rules.approve ?? []).find((g) => globMatches(g, name));
    if (glob !== undefined) return { allowed: true, approval: `${where}.approve has '${glob}'` };
  }
  return { allowed: true };
};

/** The tools `principal` may use, those refused with why, and those that wait for approval with why. */
export const applyPolicy = (
  tools: readonly RegisteredTool[],
  policy: SecurityPolicy,
  principal: PrincipalOf,
): Readonly<{ tools: RegisteredTool[]; refused: RefusedTool[]; approve: RefusedTool[] }> => {
  const kept: RegisteredTool[] = [];
  const refused: RefusedTool[] = [];
  const approve: RefusedTool[] = [];
  for (const tool of tools) {
    const verdict = decideToolFor(policy, principal, tool.name);
    if (!verdict.allowed) refused.push({ name: tool.name, reason: verdict.reason });
    else {
      kept.push(tool);
      if (verdict.approval) approve.push({ name: tool.name, reason: verdict.approval });
    }
  }
  return { tools: kept, refused, approve };
};
