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
import { hostOf, namedHostsOf, type SandboxRules, type ToolAccess } from '../../machines/security/index.ts';

/** How a host name is looked up: every address it has. */
export type ResolveHost = (host: string) => Promise<readonly string[]>;

export const systemResolve: ResolveHost = async (host) => (await lookup(host, { all: true, verbatim: true })).map((a) => a.address);

/** Why the call may not run, its host names resolved, or undefined. */
export const resolvedHostRefusal = async (
  access: ToolAccess | undefined,
  args: Readonly<Record<string, unknown>>,
  rules: SandboxRules,
  resolve: ResolveHost = systemResolve,
): Promise<string | undefined> => {
  const listed = Array.isArray(rules.network) ? rules.network : [];
  for (const { name, host } of namedHostsOf(access, args)) {
    const addresses = await resolve(host).catch(() => [] as readonly string[]);
    for (const address of addresses) {
      const kind = hostOf(address);
      if (kind === null) continue;
      if (kind.loopback && rules.loopback !== true) {
        return `'${name}' connects to ${host}, which resolves to ${address}, a loopback address (local services are where keys live); set security.sandbox.loopback to true to allow it`;
      }
      if (kind.private && !listed.includes(host)) {
        return `'${name}' connects to ${host}, which resolves to ${address}, a private or link-local address; list ${host} itself in security.sandbox.hosts to allow it`;
      }
    }
  }
  return undefined;
};
