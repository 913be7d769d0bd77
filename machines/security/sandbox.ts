/**
 * Where a tool call may reach, from `security.sandbox` in settings: before a tool runs, every
 * argument the tool declares as a path it reads, a path it writes or an address it connects to is
 * checked against the sandbox's roots and network rules. Invariant: a call passes only when every
 * declared argument that is present names a path that lies, in its lexical normal form, under an
 * allowed root (write roots count for reading too; with no roots given, only the working directory),
 * or a host the network rules let through (never loopback unless `loopback`, never a private or
 * link-local address unless listed by exact host). Anything that cannot be read unambiguously (a
 * NUL byte, a non-string, a `file:` URL naming another machine, a URL whose host parsers could
 * disagree on) is refused, and every refusal names the argument and the setting that would allow
 * it. Lexical only: symlinks are not followed and names are not resolved. Pure: the same access,
 * arguments, rules and base give the same verdict, and no input makes it throw.
 */

import type { ToolAccess } from '../../events/index.ts';

/** What a tool declares about its arguments (declared with the tool's registration in the catalog). */
export type { ToolAccess };

/**
 * `security.sandbox` in settings. Roots are absolute POSIX paths (a leading `~/` means `home`).
 * network: false = none; true = any; a list = only these hosts (exact host names or `*.example.com`
 * suffix globs); absent = none. loopback: whether 127.0.0.0/8, ::1, localhost, 0.0.0.0 are allowed
 * (default false; local services are where keys live).
 */
export type SandboxRules = Readonly<{
  read?: readonly string[];
  write?: readonly string[];
  network?: boolean | readonly string[];
  loopback?: boolean;
}>;

/** Where relative paths are resolved and what `~` is. */
export type SandboxBase = Readonly<{ cwd: string; home: string }>;

export type SandboxVerdict = Readonly<{ allowed: true }> | Readonly<{ allowed: false; reason: string; argument: string }>;

/** A host as the sandbox sees it: its normal form (lower case, no trailing dot, IPv4 dotted, IPv6 in brackets) and what kind of address it is. */
export type SandboxHost = Readonly<{ host: string; loopback: boolean; private: boolean }>;

const ALLOWED: SandboxVerdict = { allowed: true };

const refused = (argument: string, reason: string): SandboxVerdict => ({ allowed: false, reason, argument });

/** A value as it appears in a reason: quoted, and cut short when long. */
const shown = (text: string): string => JSON.stringify(text.length > 120 ? `${text.slice(0, 120)}…` : text);

const kindOf = (value: unknown): string => (value === null ? 'null' : Array.isArray(value) ? 'an array' : `a ${typeof value}`);

const isControlOrSpace = (code: number): boolean => code <= 0x20 || code === 0x7f;

const hasControlOrSpace = (text: string): boolean => {
  for (let i = 0; i < text.length; i++) if (isControlOrSpace(text.charCodeAt(i))) return true;
  return false;
};

/** `text` without the leading and trailing C0 controls and spaces that URL parsers drop. */
const trimControlsAndSpaces = (text: string): string => {
  let start = 0;
  let end = text.length;
  while (start < end && text.charCodeAt(start) <= 0x20) start++;
  while (end > start && text.charCodeAt(end - 1) <= 0x20) end--;
  return text.slice(start, end);
};

// ── Paths ───────────────────────────────────────────────────────────────────────────────────────

/** A `.` or `..` segment, a repeated slash or a trailing one: what collapsing would change. */
const NOT_COLLAPSED = /\/(?:\.{1,2})?(?:\/|$)/;

/** An absolute path with `.`, `..` (never above `/`), repeated and trailing slashes collapsed. */
const collapseSegments = (path: string): string => {
  if (path.startsWith('/') && !NOT_COLLAPSED.test(path)) return path;
  const kept: string[] = [];
  for (const segment of path.split('/')) {
    if (segment === '' || segment === '.') continue;
    if (segment === '..') kept.pop();
    else kept.push(segment);
  }
  return `/${kept.join('/')}`;
};

/** A base directory in normal form (a relative one is taken from `/`); null when it is not a usable path. */
const baseDirectory = (dir: unknown): string | null =>
  typeof dir === 'string' && dir !== '' && !dir.includes('\0') ? collapseSegments(dir) : null;

/**
 * The path a `file:` URL names, percent-decoded; null when it names another machine (a host other
 * than empty or localhost) or could be read two ways: raw backslashes (WHATWG URLs read them as `/`,
 * naive prefix-stripping does not), `?` or `#`, controls or spaces, or broken percent-encoding.
 */
const pathOfFileUrl = (url: string): string | null => {
  if (url.includes('\\') || url.includes('?') || url.includes('#') || hasControlOrSpace(url)) return null;
  const rest = url.slice('file:'.length);
  let encoded: string;
  if (rest.startsWith('//')) {
    const pathStart = rest.indexOf('/', 2);
    const host = pathStart < 0 ? rest.slice(2) : rest.slice(2, pathStart);
    if (host !== '' && host.toLowerCase() !== 'localhost') return null;
    encoded = pathStart < 0 ? '/' : rest.slice(pathStart);
  } else if (rest.startsWith('/')) {
    encoded = rest;
  } else {
    return null;
  }
  try {
    const decoded = decodeURIComponent(encoded);
    return decoded.includes('\0') ? null : decoded;
  } catch {
    return null;
  }
};

/** Whether `text` reads as a `file:` URL to a URL parser (which drops tabs and newlines anywhere and controls at the ends). */
const looksLikeFileUrl = (text: string): boolean =>
  text.includes(':') && /^file:/i.test(trimControlsAndSpaces(text.replace(/[\t\n\r]/g, '')));

/**
 * The lexical normal form of a path argument: absolute, with no `.` or `..` segments and no
 * repeated or trailing slashes. `~` and `~/…` are under `base.home`, relative paths under
 * `base.cwd`, `file:` URLs are their decoded path. Percent-encoding in a plain path is kept (a file
 * may be named `%2e%2e`) and backslashes are ordinary characters. Null when it cannot be a path:
 * not a string, empty, a NUL byte, or a `file:` URL that names another host or reads two ways.
 */
export const normalisePath = (path: string, base: SandboxBase): string | null => {
  const absolute = absolutePath(path, base);
  return absolute === null ? null : collapseSegments(absolute);
};

/**
 * The absolute path a tool given `path` opens, with its `.` and `..` segments still in it: the
 * file system applies a `..` after following the link before it, so `lnk/..` is where the link
 * leads, up one, not where the text says. Null as for `normalisePath`.
 */
export const absolutePath = (path: string, base: SandboxBase): string | null => {
  if (typeof path !== 'string' || path === '' || path.includes('\0')) return null;
  if (looksLikeFileUrl(path)) {
    if (!/^file:/i.test(path)) return null;
    const decoded = pathOfFileUrl(path);
    return decoded === null || decoded.startsWith('/') ? decoded : `/${decoded}`;
  }
  if (path.startsWith('/')) return path;
  if (path === '~' || path.startsWith('~/')) {
    const home = baseDirectory(base?.home);
    return home === null ? null : `${home}/${path.slice(1)}`;
  }
  const cwd = baseDirectory(base?.cwd);
  return cwd === null ? null : `${cwd}/${path}`;
};

/** Whether normalised `path` is `root` or inside it (both normalised): "/a/bc" is not under "/a/b". */
export const isUnder = (path: string, root: string): boolean =>
  root === '/' ? path.startsWith('/') : path === root || path.startsWith(`${root}/`);

/** The normalised roots a setting lists, or `[cwd]` when it lists none; roots that are not paths are dropped. */
const rootsOf = (listed: unknown, base: SandboxBase): string[] => {
  if (!Array.isArray(listed)) {
    const cwd = baseDirectory(base?.cwd);
    return cwd === null ? [] : [cwd];
  }
  return listed.flatMap((root: unknown) => {
    const normal = typeof root === 'string' ? normalisePath(root, base) : null;
    return normal === null ? [] : [normal];
  });
};

const rootList = (roots: readonly string[]): string => (roots.length === 0 ? 'none' : roots.join(', '));

// ── Hosts ───────────────────────────────────────────────────────────────────────────────────────

/** The authority (`userinfo@host:port`) of a URL or a bare `host[:port]`; null for a `file:` URL or a scheme without `//`. */
const authorityOf = (target: string): string | null => {
  const scheme = /^([a-zA-Z][a-zA-Z0-9+.-]*):(.*)$/s.exec(target);
  let rest = target;
  if (scheme !== null) {
    const [, name = '', afterColon = ''] = scheme;
    if (afterColon.startsWith('//')) {
      if (name.toLowerCase() === 'file') return null;
      rest = afterColon.slice(2);
    } else if (!/^\d*(?:[/?#]|$)/.test(afterColon)) {
      return null; // `mailto:a@b`, `http:evil.com`: not a URL with an authority, nor host:port
    }
  } else if (target.startsWith('//')) {
    rest = target.slice(2);
  }
  const end = rest.search(/[/?#]/);
  return end < 0 ? rest : rest.slice(0, end);
};

/** The host part of an authority, as written: after the last `@`, without the port; IPv6 keeps its brackets. */
const hostPartOf = (authority: string): string | null => {
  if (authority.includes('\\') || hasControlOrSpace(authority)) return null; // parsers disagree on `\` in an authority
  const hostPort = authority.slice(authority.lastIndexOf('@') + 1);
  let host: string;
  let port: string;
  if (hostPort.startsWith('[')) {
    const close = hostPort.indexOf(']');
    if (close < 0) return null;
    host = hostPort.slice(0, close + 1);
    const after = hostPort.slice(close + 1);
    if (after !== '' && !after.startsWith(':')) return null;
    port = after.slice(1);
  } else {
    const colon = hostPort.indexOf(':');
    host = colon < 0 ? hostPort : hostPort.slice(0, colon);
    port = colon < 0 ? '' : hostPort.slice(colon + 1);
  }
  return host !== '' && /^\d*$/.test(port) ? host : null;
};

/**
 * A host in normal form as a WHATWG URL parser reads it for http (lower case, IDNA, percent-decoded,
 * every IPv4 spelling as dotted decimal, IPv6 compressed in brackets), with trailing dots removed
 * (and read again, so `0x7f.1..` is still 127.0.0.1). Null when the parser refuses it.
 */
const canonicalHost = (written: string): string | null => {
  let host = written;
  for (let round = 0; round < 4; round++) {
    let parsed: string;
    try {
      parsed = new URL(`http://${host}/`).hostname;
    } catch {
      return null;
    }
    const undotted = parsed.replace(/\.+$/, '');
    if (undotted === '') return null;
    if (undotted === parsed) return parsed;
    host = undotted;
  }
  return null;
};

/** The four octets of a dotted-decimal IPv4 address, or null. */
const ipv4Octets = (host: string): number[] | null => {
  const match = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.exec(host);
  if (match === null) return null;
  const octets = match.slice(1).map(Number);
  return octets.every((octet) => octet <= 255) ? octets : null;
};

/** The eight 16-bit groups of an IPv6 address (without brackets), or null. */
const ipv6Groups = (text: string): number[] | null => {
  const groupsOf = (part: string): number[] | null => {
    if (part === '') return [];
    const groups: number[] = [];
    const pieces = part.split(':');
    for (const [index, piece] of pieces.entries()) {
      const octets = index === pieces.length - 1 ? ipv4Octets(piece) : null;
      if (octets !== null) {
        groups.push(((octets[0] ?? 0) << 8) | (octets[1] ?? 0), ((octets[2] ?? 0) << 8) | (octets[3] ?? 0));
      } else if (/^[0-9a-f]{1,4}$/i.test(piece)) {
        groups.push(Number.parseInt(piece, 16));
      } else {
        return null;
      }
    }
    return groups;
  };
  const halves = text.split('::');
  if (halves.length > 2) return null;
  const head = groupsOf(halves[0] ?? '');
  const tail = halves.length === 2 ? groupsOf(halves[1] ?? '') : [];
  if (head === null || tail === null) return null;
  if (halves.length === 1) return head.length === 8 ? head : null;
  const missing = 8 - head.length - tail.length;
  return missing >= 1 ? [...head, ...new Array<number>(missing).fill(0), ...tail] : null;
};

type AddressKind = Readonly<{ loopback: boolean; private: boolean }>;

const PUBLIC: AddressKind = { loopback: false, private: false };

/**
 * 127.0.0.0/8 and 0.0.0.0/8 (connecting to 0.0.0.0 reaches this machine) are loopback; 10/8,
 * 172.16/12, 192.168/16, 169.254/16 (link-local, cloud metadata at 169.254.169.254) and 100.64/10
 * (carrier-grade NAT, where some clouds keep metadata too) are private.
 */
const ipv4Kind = ([a = 0, b = 0]: readonly number[]): AddressKind => ({
  loopback: a === 127 || a === 0,
  private:
    a === 10 ||
    (a === 172 && b >= 16 && b <= 31) ||
    (a === 192 && b === 168) ||
    (a === 169 && b === 254) ||
    (a === 100 && b >= 64 && b <= 127),
});

/**
 * `::` and `::1` are loopback; an IPv4 address carried inside IPv6 (mapped `::ffff:a.b.c.d`,
 * compatible `::a.b.c.d`, translated `::ffff:0:a.b.c.d`, NAT64 `64:ff9b::a.b.c.d`) is what its IPv4
 * address is; fc00::/7 (unique local) and fe80::/9 (link-local, and the old site-local) are private.
 */
const ipv6Kind = (groups: readonly number[]): AddressKind => {
  const [g0 = 0, g1 = 0, g2 = 0, g3 = 0, g4 = 0, g5 = 0, g6 = 0, g7 = 0] = groups;
  const embedded = [g6 >> 8, g6 & 0xff, g7 >> 8, g7 & 0xff];
  const zeroTo = (count: number) => groups.slice(0, count).every((group) => group === 0);
  if (zeroTo(7) && (g7 === 0 || g7 === 1)) return { loopback: true, private: false };
  if (zeroTo(5) && (g5 === 0xffff || g5 === 0)) return ipv4Kind(embedded);
  if (zeroTo(4) && g4 === 0xffff && g5 === 0) return ipv4Kind(embedded);
  if (g0 === 0x64 && g1 === 0xff9b && g2 === 0 && g3 === 0 && g4 === 0 && g5 === 0) return ipv4Kind(embedded);
  return { loopback: false, private: (g0 & 0xfe00) === 0xfc00 || (g0 & 0xff80) === 0xfe80 };
};

/** Names that resolve to this machine: localhost and everything under it, and the Debian-style /etc/hosts aliases. */
const LOOPBACK_NAMES: readonly string[] = ['localhost', 'localhost.localdomain', 'ip6-localhost', 'ip6-loopback'];

const hostKind = (host: string): AddressKind => {
  if (host.startsWith('[')) {
    const groups = ipv6Groups(host.slice(1, -1));
    return groups === null ? { loopback: true, private: true } : ipv6Kind(groups); // unreadable: assume the worst
  }
  const octets = ipv4Octets(host);
  if (octets !== null) return ipv4Kind(octets);
  return host.endsWith('.localhost') || LOOPBACK_NAMES.includes(host) ? { loopback: true, private: false } : PUBLIC;
};

const isIpLiteral = (host: string): boolean => host.startsWith('[') || ipv4Octets(host) !== null;

/** The host a bare IPv6 address (`::1`, `fe80::1`) names, in brackets, or null when `target` is not one. */
const bareIpv6 = (target: string): string | null =>
  !target.includes('[') && !target.includes('/') && target.split(':').length > 2 && ipv6Groups(target) !== null ? `[${target}]` : null;

/**
 * The host a network argument connects to: a URL of any scheme with an authority (`scheme://…`,
 * the host after the last `@`), `//host`, a bare `host[:port]` or a bare IPv6 address; in normal
 * form, with whether it is loopback or private. Null when no host can be read unambiguously: a
 * `file:` URL (a path, not a host), a scheme without `//`, a backslash, space or control in the
 * authority, a bad port, or a host a URL parser refuses.
 */
export const hostOf = (target: string): SandboxHost | null => {
  if (typeof target !== 'string') return null;
  const trimmed = trimControlsAndSpaces(target);
  const written = bareIpv6(trimmed) ?? hostPartOf(authorityOf(trimmed) ?? '');
  const host = written === null ? null : canonicalHost(written);
  return host === null ? null : { host, ...hostKind(host) };
};

type HostPattern = Readonly<{ exact: string } | { suffix: string }>;

/** A `security.sandbox.hosts` entry as a pattern: `*.example.com` any name under example.com, anything else one host. */
const hostPatternOf = (entry: unknown): HostPattern | null => {
  if (typeof entry !== 'string') return null;
  if (entry.startsWith('*.')) {
    const suffix = hostOf(entry.slice(2));
    return suffix === null || isIpLiteral(suffix.host) ? null : { suffix: suffix.host };
  }
  const host = hostOf(entry);
  return host === null ? null : { exact: host.host };
};

const patternMatches = (pattern: HostPattern, host: string): boolean =>
  'exact' in pattern ? pattern.exact === host : !isIpLiteral(host) && host.endsWith(`.${pattern.suffix}`);

// ── Decisions ───────────────────────────────────────────────────────────────────────────────────

/** The value of a declared argument; 'absent' when it is missing or undefined, 'unreadable' when reading it throws. */
const argumentValue = (args: unknown, name: string): Readonly<{ value: unknown }> | 'absent' | 'unreadable' => {
  if (typeof args !== 'object' || args === null) return 'absent';
  try {
    if (!Object.hasOwn(args, name)) return 'absent';
    const value = (args as Record<string, unknown>)[name];
    return value === undefined ? 'absent' : { value };
  } catch {
    return 'unreadable';
  }
};

type LabelledString = Readonly<{ label: string; text: string }>;

/** The strings an argument holds (one, or each of an array's) with how each is named in a reason; or the first item that is not a string. */
const stringsOf = (
  name: string,
  value: unknown,
): Readonly<{ items: LabelledString[] } | { bad: Readonly<{ label: string; value: unknown }> }> => {
  const labelled = Array.isArray(value)
    ? value.map((item: unknown, index) => ({ label: `'${name}[${index}]'`, value: item }))
    : [{ label: `'${name}'`, value }];
  const items: LabelledString[] = [];
  for (const { label, value: item } of labelled) {
    if (typeof item !== 'string') return { bad: { label, value: item } };
    items.push({ label, text: item });
  }
  return { items };
};

type Mode = 'read' | 'write';

/** The verdict on one path argument: each path it holds must lie under one of `roots`. */
const decidePathArgument = (name: string, value: unknown, mode: Mode, roots: readonly string[], base: SandboxBase): SandboxVerdict => {
  const strings = stringsOf(name, value);
  if ('bad' in strings) {
    return refused(
      name,
      `${strings.bad.label} must be a path string, not ${kindOf(strings.bad.value)}; pass the path it ${mode}s as a string`,
    );
  }
  for (const { label, text } of strings.items) {
    const normal = normalisePath(text, base);
    if (normal === null) {
      return refused(
        name,
        `${label} is ${shown(text)}, which cannot be read as a path (empty, a NUL byte, or a file: URL naming another host or with ?, #, \\ or spaces); pass a plain path`,
      );
    }
    if (!roots.some((root) => isUnder(normal, root))) {
      const written = normal === text ? '' : ` (written ${shown(text)})`;
      return refused(
        name,
        `${label} is ${normal}${written}, outside the sandbox's ${mode} roots (${rootList(roots)}); add a root to security.sandbox.${mode} to allow it`,
      );
    }
  }
  return ALLOWED;
};

/** What keeps `host` out under `rules`, as the fixes that would let it in; empty when it may be reached. */
const networkFixes = (found: SandboxHost, rules: SandboxRules): Readonly<{ what: string; fixes: string[] }> => {
  const network = rules.network;
  const list = Array.isArray(network) ? network : null;
  const patterns = (list ?? []).flatMap((entry: unknown) => {
    const pattern = hostPatternOf(entry);
    return pattern === null ? [] : [pattern];
  });
  const what: string[] = [];
  const fixes: string[] = [];
  if (found.loopback && rules.loopback !== true) {
    what.push('a loopback address (local services are where keys live)');
    fixes.push('set security.sandbox.loopback to true');
  }
  if (found.private && !patterns.some((pattern) => 'exact' in pattern && pattern.exact === found.host)) {
    what.push('a private or link-local address (cloud metadata lives at 169.254.169.254), allowed only when listed by exact host');
    fixes.push(`list ${found.host} itself in security.sandbox.hosts (network: true does not reach private addresses)`);
  } else if (list !== null && !patterns.some((pattern) => patternMatches(pattern, found.host))) {
    what.push(`not a host security.sandbox.hosts lists (${list.length === 0 ? 'none' : list.join(', ')})`);
    fixes.push(`add ${found.host} to security.sandbox.hosts`);
  }
  return { what: what.join(' and '), fixes };
};

/** The verdict on one network argument: each target it holds must name a host the network rules let through. */
const decideNetworkArgument = (name: string, value: unknown, rules: SandboxRules): SandboxVerdict => {
  if (rules.network !== true && !Array.isArray(rules.network)) {
    return refused(
      name,
      `'${name}' is an address to connect to, but the sandbox allows no network access; set security.sandbox.network to true, or list the hosts in security.sandbox.hosts, to allow it`,
    );
  }
  const strings = stringsOf(name, value);
  if ('bad' in strings) {
    return refused(
      name,
      `${strings.bad.label} must be a URL or host string, not ${kindOf(strings.bad.value)}; pass the address as a string`,
    );
  }
  for (const { label, text } of strings.items) {
    const found = hostOf(text);
    if (found === null) {
      const why = looksLikeFileUrl(text)
        ? 'a file: URL, which is a path and not a host'
        : 'not a URL or host[:port] whose host can be read unambiguously';
      return refused(name, `${label} is ${shown(text)}, ${why}; pass a URL like https://example.com/ or a host like example.com:443`);
    }
    const { what, fixes } = networkFixes(found, rules);
    if (fixes.length > 0) return refused(name, `${label} connects to ${found.host}, ${what}; ${fixes.join(' and ')} to allow it`);
  }
  return ALLOWED;
};

const namesOf = (declared: unknown): readonly string[] =>
  Array.isArray(declared) ? declared.filter((name): name is string => typeof name === 'string') : [];

/**
 * The host names a call's declared network arguments connect to, by argument, as the sandbox
 * reads them: what a resolver must look up to judge where they lead. Addresses as written and
 * loopback names are judged already and left out, as is what cannot be read.
 */
export const namedHostsOf = (access: ToolAccess | undefined, args: unknown): Readonly<{ name: string; host: string }>[] =>
  namesOf(access?.network).flatMap((name) => {
    const found = argumentValue(args, name);
    const strings = typeof found === 'object' ? stringsOf(name, found.value) : undefined;
    if (strings === undefined || 'bad' in strings) return [];
    return strings.items.flatMap(({ text }) => {
      const target = hostOf(text);
      return target === null || target.loopback || isIpLiteral(target.host) ? [] : [{ name, host: target.host }];
    });
  });

type Roots = Readonly<{ readRoots: readonly string[]; writeRoots: readonly string[] }>;

/** The normalised roots of each rules object under each base, worked out once (settings do not change under a running proxy). */
const rootsCache = new WeakMap<SandboxRules, WeakMap<SandboxBase, Roots>>();

const rootsFor = (rules: SandboxRules, base: SandboxBase): Roots => {
  const cacheable = typeof base === 'object' && base !== null;
  const known = cacheable ? rootsCache.get(rules)?.get(base) : undefined;
  if (known) return known;
  const writeRoots = rootsOf(rules.write, base);
  const roots = { writeRoots, readRoots: [...new Set([...rootsOf(rules.read, base), ...writeRoots])] };
  if (cacheable) {
    const byBase = rootsCache.get(rules) ?? new WeakMap<SandboxBase, Roots>();
    byBase.set(base, roots);
    rootsCache.set(rules, byBase);
  }
  return roots;
};

/** The verdict, for inputs that can be read (a throwing getter in the access or rules ends in the catch below). */
const decideReadable = (access: ToolAccess | undefined, args: unknown, rules: SandboxRules, base: SandboxBase): SandboxVerdict => {
  const safeRules: SandboxRules = typeof rules === 'object' && rules !== null ? rules : {};
  const { readRoots, writeRoots } = rootsFor(safeRules, base);
  const checks: Array<[Mode | 'network', readonly string[]]> = [
    ['read', namesOf(access?.read)],
    ['write', namesOf(access?.write)],
    ['network', namesOf(access?.network)],
  ];
  for (const [mode, names] of checks) {
    for (const name of names) {
      const found = argumentValue(args, name);
      if (found === 'absent') continue;
      if (found === 'unreadable') return refused(name, `'${name}' could not be read; pass it as plain data`);
      const verdict =
        mode === 'network'
          ? decideNetworkArgument(name, found.value, safeRules)
          : decidePathArgument(name, found.value, mode, mode === 'read' ? readRoots : writeRoots, base);
      if (!verdict.allowed) return verdict;
    }
  }
  return ALLOWED;
};

/**
 * Whether a tool call may run under the sandbox: every declared path argument present must lie
 * under a read root (for `read`; write roots count too) or a write root (for `write`), every
 * declared network argument must name a host the network rules allow. The first refusal is the
 * verdict. No declared access, or none of its arguments present, is allowed; access or rules that
 * cannot be read at all refuse the call.
 */
export const decideSandbox = (
  access: ToolAccess | undefined,
  args: Readonly<Record<string, unknown>>,
  rules: SandboxRules,
  base: SandboxBase,
): SandboxVerdict => {
  try {
    return decideReadable(access, args, rules, base);
  } catch {
    return refused('', "the sandbox could not read the tool's declared access or its own rules; check security.sandbox in settings");
  }
};

/** The sandbox a turn judges its calls by: the rules, where relative paths lead, and the daemon's own paths no tool may touch. */
export type TurnSandbox = Readonly<{ rules: SandboxRules; base: SandboxBase } & DaemonPaths>;

/**
 * The daemon's own paths, which no tool may touch whatever its roots: the files and folders it
 * names (the vault, settings, the log), and the whole data dir but the folders inside it that are
 * roots (the files root), so what the daemon keeps there (its state, the web UI's token, the
 * plugins it starts) is out of reach even under a root that holds the data dir.
 */
export type DaemonPaths = Readonly<{ protectedPaths: readonly string[]; dataDir?: string; openInside?: readonly string[] }>;

/** The daemon's path `path` falls under (for the refusal to name), or undefined when it is none of the daemon's. */
export const daemonPathOf = (path: string, daemon: DaemonPaths): string | undefined => {
  const named = daemon.protectedPaths.find((p) => isUnder(path, p));
  if (named !== undefined || daemon.dataDir === undefined || !isUnder(path, daemon.dataDir)) return named;
  return daemon.openInside?.some((open) => isUnder(path, open)) ? undefined : daemon.dataDir;
};

/**
 * Why the sandbox refuses a call judged on its paths as written (the rules, then the daemon's own
 * files), or undefined. Paths as they resolve through links are judged apart, where the files are.
 */
export const refusalAsWritten = (
  access: ToolAccess | undefined,
  args: Readonly<Record<string, unknown>>,
  sandbox: TurnSandbox,
): string | undefined => {
  if (!access) return undefined;
  const verdict = decideSandbox(access, args, sandbox.rules, sandbox.base);
  if (!verdict.allowed) return verdict.reason;
  for (const argument of [...(access.read ?? []), ...(access.write ?? [])]) {
    if (!Object.hasOwn(args, argument)) continue;
    for (const value of [args[argument]].flat()) {
      const path = typeof value === 'string' ? normalisePath(value, sandbox.base) : null;
      const guarded = path && daemonPathOf(path, sandbox);
      if (guarded) return daemonFileRefusal(argument, guarded);
    }
  }
  return undefined;
};

/** Why a call whose `argument` leads to `guarded` (one of the daemon's own files) is refused. */
export const daemonFileRefusal = (argument: string, guarded: string): string =>
  `'${argument}' leads to ${guarded}, which holds the daemon's own secrets, log or state; no tool may touch it`;
