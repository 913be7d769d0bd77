/**
 * The network sandbox judged again where names lead: the rules are checked on a host as written
 * (no loopback, no private address unless listed), but a name such as this machine's own, or one
 * a resolver points at 127.0.0.1, reaches loopback all the same. Before a call runs, each host
 * name of its declared network arguments is looked up; a name that resolves to a loopback or a
 * private address the rules do not allow refuses the call. A name that does not resolve is left to
 * the tool, which will fail on it. A resolver that answers differently later (rebinding) is out
 * of reach of any check made before the call.
 */
import { lookup } from 'node:dns/promises';
import { hostOf, type SandboxRules, type ToolAccess } from '../../machines/security/index.ts';

/** How a host name is looked up: every address it has. */
export type ResolveHost = (host: string) => Promise<readonly string[]>;

export const systemResolve: ResolveHost = async (host) => (await lookup(host, { all: true, verbatim: true })).map((a) => a.address);

/** Each string of a declared network argument: a URL or host, or a list of them. */
const targetsOf = (value: unknown): string[] => (Array.isArray(value) ? value : [value]).filter((v): v is string => typeof v === 'string');

/** Whether `host` is written as an address already (nothing to look up). */
const isAddress = (host: string): boolean => /^[\d.]+$/.test(host) || host.includes(':');

/** Why the call may not run, its host names resolved, or undefined. */
export const resolvedHostRefusal = async (
  access: ToolAccess | undefined,
  args: Readonly<Record<string, unknown>>,
  rules: SandboxRules,
  resolve: ResolveHost = systemResolve,
): Promise<string | undefined> => {
  const listed = Array.isArray(rules.network) ? rules.network : [];
  for (const name of access?.network ?? []) {
    if (!Object.hasOwn(args, name)) continue;
    for (const text of targetsOf(args[name])) {
      const found = hostOf(text);
      if (found === null || isAddress(found.host) || found.loopback) continue;
      const addresses = await resolve(found.host).catch(() => [] as readonly string[]);
      for (const address of addresses) {
        const kind = hostOf(address);
        if (kind === null) continue;
        if (kind.loopback && rules.loopback !== true) {
          return `'${name}' connects to ${found.host}, which resolves to ${address}, a loopback address (local services are where keys live); set security.sandbox.loopback to true to allow it`;
        }
        if (kind.private && !listed.includes(found.host)) {
          return `'${name}' connects to ${found.host}, which resolves to ${address}, a private or link-local address; list ${found.host} itself in security.sandbox.hosts to allow it`;
        }
      }
    }
  }
  return undefined;
};
