/**
 * Which secrets a tool call may have filled in, decided from the names its arguments give as
 * aliases (`@{NAME}`) and the vault's grants (the tools each secret may be filled into), never
 * from a value. The turn decides it before the call leaves, so the log says which secrets a tool
 * was given before it has them; the proxy decides it again on the vault as it is when it fills. Pure.
 */
import { globMatches } from './toolPolicy.ts';

/** A secret by name, with the tools (names or globs) it may be filled into. */
export type SecretGrant = Readonly<{ name: string; tools: readonly string[] }>;

/** The aliases a call names, by what becomes of them: filled, not in the vault, or not granted to the tool. */
export type AliasesMet = Readonly<{ filled: readonly string[]; unknown: readonly string[]; withheld: readonly string[] }>;

/** What the turn decided for a call's aliases: none named, fill these, or refuse it with why. */
export type FillDecision =
  | Readonly<{ kind: 'none' }>
  | Readonly<{ kind: 'fill'; secrets: readonly string[] }>
  | Readonly<{ kind: 'refuse'; reason: string }>;

export const MAX_SECRET_NAME_LENGTH = 64;

/** `@{NAME}`, NAME as `homed secret set` takes it (what `aliasNameAt` reads, as a pattern). */
export const ALIAS = /@\{([A-Z][A-Z0-9_]{0,63})\}/g;

export const aliasOf = (name: string): string => `@{${name}}`;

const CLOSE_BRACE = 0x7d;
const isNameStart = (c: number): boolean => c >= 0x41 && c <= 0x5a;
const isNameChar = (c: number): boolean => isNameStart(c) || (c >= 0x30 && c <= 0x39) || c === 0x5f;

/** The NAME of the alias `@{NAME}` that starts at `at` in `text`, if one does (NAME as `homed secret set` takes it). */
export const aliasNameAt = (text: string, at: number): string | undefined => {
  const start = at + 2;
  if (!isNameStart(text.charCodeAt(start))) return undefined;
  let end = start + 1;
  while (end - start < MAX_SECRET_NAME_LENGTH && isNameChar(text.charCodeAt(end))) end++;
  return text.charCodeAt(end) === CLOSE_BRACE ? text.slice(start, end) : undefined;
};

const collectNames = (value: unknown, names: Set<string>): void => {
  if (typeof value === 'string') {
    for (let at = value.indexOf('@{'); at >= 0; at = value.indexOf('@{', at + 2)) {
      const name = aliasNameAt(value, at);
      if (name !== undefined) names.add(name);
    }
  } else if (Array.isArray(value)) {
    for (const item of value) collectNames(item, names);
  } else if (typeof value === 'object' && value !== null) {
    for (const key of Object.keys(value)) collectNames((value as Record<string, unknown>)[key], names);
  }
};

/** The secrets named by alias in any string inside `value`, each once, sorted. */
export const aliasNamesIn = (value: unknown): string[] => {
  const names = new Set<string>();
  collectNames(value, names);
  return [...names].sort();
};

/** What becomes of each of `names` in a call of `tool`, given the vault's grants. */
export const sortAliases = (names: readonly string[], grants: readonly SecretGrant[], tool: string): AliasesMet => {
  const met = { filled: [] as string[], unknown: [] as string[], withheld: [] as string[] };
  for (const name of names) {
    const grant = grants.find((g) => g.name === name);
    const list = !grant ? met.unknown : grant.tools.some((glob) => globMatches(glob, tool)) ? met.filled : met.withheld;
    list.push(name);
  }
  return met;
};

/** Why no secret is filled into a call whose input came from `principal`. */
export const secretsNotFilledFor = (principal: string): string =>
  `secrets are filled in only for the owner's inputs, and this one is from ${principal}; ` +
  `the owner can vouch for that principal with 'security.owners' in settings`;

/**
 * Why a call of `tool` that named these aliases may not run, or undefined when every one may be
 * filled in. `asOf: 'message'`: judged on the vault as the turn's message found it (the turn's
 * decision), so a change made since is said to apply from the next message.
 */
export const fillRefusal = (
  met: AliasesMet,
  toolsOf: (name: string) => readonly string[],
  tool: string,
  asOf: 'now' | 'message' = 'now',
): string | undefined => {
  const when = asOf === 'message' ? ' when this message came in' : '';
  const next = asOf === 'message' ? ' (it applies from the next message)' : '';
  if (met.unknown.length > 0) {
    const names = met.unknown.join(', ');
    const missing = asOf === 'message' ? `no secret named ${names} was in the vault${when}` : `no secret named ${names} in the vault`;
    return `${missing}; 'homed secret list' shows the names, 'homed secret set NAME' adds one${next}`;
  }
  if (met.withheld.length === 0) return undefined;
  const which = met.withheld.map((n) => `${n} (${toolsOf(n).join(', ') || 'no tool'})`).join(', ');
  return `${which} may not be filled into ${tool}${when}; the owner allows a tool with 'homed secret set NAME --tools ${tool}'${next}`;
};

/**
 * The kernel's own tools that keep what they are given (the memory's, the cold context's, the
 * timers'): a value filled into one would be in the log, the memory and what subscribed plugins
 * receive, whatever its grant says (a red team granted a secret to '*' and found it in all three).
 */
export const KEEPING_TOOLS = ['memory_*', 'coldcontext_*', 'timer_*'] as const;

/**
 * Why a secret may not be granted to the tools `globs` name, or undefined: a name or glob every
 * match of which is one of KEEPING_TOOLS (`timer_set`, `memory_*`) grants what would never be
 * filled (a newcomer granted timer_set and was told the secret would be used there).
 */
export const keptToolsGrant = (globs: readonly string[]): string | undefined => {
  for (const glob of globs) {
    const literal = glob.split(/[*?]/)[0]!;
    const kept = KEEPING_TOOLS.find((k) => literal.startsWith(k.slice(0, -1)));
    if (kept !== undefined) {
      return (
        `a secret is never filled into ${glob}: the kernel's memory, cold context and timer tools (${KEEPING_TOOLS.join(', ')}) ` +
        'keep what they are given, in the log and in memory; grant it to the tool that needs the value'
      );
    }
  }
  return undefined;
};

/** Why no secret is filled into `tool`, one of KEEPING_TOOLS. */
const keptByTool = (tool: string): string =>
  `a secret is never filled into ${tool}: the kernel's memory, cold context and timer tools keep what they are given, ` +
  'in the log and in memory; name the secret there without its @{…} alias';

/** What the model reads for a call the firewall refused. */
export const refusedByFirewall = (reason: string): string => `Refused by the security firewall: ${reason}`;

/**
 * What becomes of a call of `tool` whose aliases `met` sorted: none named, all filled, or refused
 * (`notFilled`, why its input may have none, first). The turn decides by it before the call
 * leaves, the proxy again on the vault as it is when it fills.
 */
export const fillVerdict = (
  met: AliasesMet,
  notFilled: string | undefined,
  toolsOf: (name: string) => readonly string[],
  tool: string,
  asOf: 'now' | 'message' = 'now',
): FillDecision => {
  if (met.filled.length + met.unknown.length + met.withheld.length === 0) return { kind: 'none' };
  if (notFilled !== undefined) return { kind: 'refuse', reason: notFilled };
  if (met.filled.length > 0 && KEEPING_TOOLS.some((glob) => globMatches(glob, tool))) return { kind: 'refuse', reason: keptByTool(tool) };
  const reason = fillRefusal(met, toolsOf, tool, asOf);
  return reason === undefined ? { kind: 'fill', secrets: met.filled } : { kind: 'refuse', reason };
};

/**
 * The turn's decision for a call of `tool` with `args`, given the vault's grants as the turn began
 * and, when its input may have no secrets filled in, why not.
 */
export const decideFill = (
  grants: readonly SecretGrant[],
  notFilled: string | undefined,
  tool: string,
  args: Readonly<Record<string, unknown>>,
): FillDecision => {
  const met = sortAliases(aliasNamesIn(args), grants, tool);
  return fillVerdict(met, notFilled, (name) => grants.find((g) => g.name === name)?.tools ?? [], tool, 'message');
};
