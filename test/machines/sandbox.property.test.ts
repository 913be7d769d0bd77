/**
 * The sandbox decider against random paths, rules, addresses and arguments: normal forms are
 * absolute, final and free of `.` and `..`; a path is allowed exactly when a plain stack over its
 * segments (written here, separately) ends under a root; writing is never looser than reading;
 * every spelling of an IPv4 address is read as the address it is; suffix globs match exactly the
 * names under them; with no network nothing connects; and no input makes the decider throw.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  daemonPathOf,
  decideSandbox,
  hostOf,
  isUnder,
  normalisePath,
  type SandboxBase,
  type SandboxRules,
  type ToolAccess,
} from '../../machines/security/index.ts';

const base: SandboxBase = { cwd: '/w/c', home: '/h/u' };
const CWD = ['w', 'c'];

const READS: ToolAccess = { read: ['path'] };
const WRITES: ToolAccess = { write: ['path'] };

/** Segments the normaliser must treat specially, and look-alikes it must not. */
const segment = fc.constantFrom('a', 'b', 'w', 'c', 'ab', '', '.', '..', '...', '.a', '%2e%2e', '\\..', '~', 'file:');
const name = fc.constantFrom('a', 'b', 'w', 'c', 'ab', 'bc');
const rootSegments = fc.array(name, { maxLength: 3 });
const pathOf = (segments: readonly string[]): string => `/${segments.join('/')}`;

/** The normal form by a plain stack over segments: skip empty and `.`, pop on `..` (never past the top). */
const stackNormal = (start: readonly string[], segments: readonly string[]): string[] => {
  const stack = [...start];
  for (const s of segments) {
    if (s === '' || s === '.') continue;
    if (s === '..') stack.pop();
    else stack.push(s);
  }
  return stack;
};

/** Whether the segments of `path` begin with those of `root`. */
const startsWithSegments = (path: readonly string[], root: readonly string[]): boolean =>
  root.length <= path.length && root.every((s, i) => path[i] === s);

/** Whether segments joined by `/` are a relative path read from cwd (not empty, absolute, `~` or a `file:` URL). */
const isPlainRelative = (segments: readonly string[]): boolean => {
  const written = segments.join('/');
  return written !== '' && !written.startsWith('/') && segments[0] !== '~' && segments[0] !== 'file:';
};

/** Strings that look like paths of every kind the normaliser reads, and plain noise. */
const pathLike = fc.oneof(
  fc
    .tuple(
      fc.constantFrom('', '/', '~/', '~', './', 'file://', 'file:///', 'file://localhost/', 'file:/'),
      fc.array(segment, { maxLength: 8 }),
    )
    .map(([prefix, segments]) => prefix + segments.join('/')),
  fc.string({ maxLength: 30 }),
  fc.string({ unit: 'binary', maxLength: 30 }),
);

describe('normalisePath', () => {
  it('gives an absolute path with no empty, . or .. segments, which it leaves as it is', () => {
    fc.assert(
      fc.property(pathLike, (path) => {
        const normal = normalisePath(path, base);
        if (normal === null) return;
        expect(normal.startsWith('/')).toBe(true);
        if (normal !== '/')
          expect(
            normal
              .slice(1)
              .split('/')
              .filter((s) => s === '' || s === '.' || s === '..'),
          ).toEqual([]);
        expect(normalisePath(normal, base)).toBe(normal);
      }),
      { numRuns: 3000 },
    );
  });

  it('is the stack normal form: absolute paths from /, relative ones from cwd', () => {
    fc.assert(
      fc.property(fc.boolean(), fc.array(segment, { maxLength: 10 }), (absolute, segments) => {
        fc.pre(absolute || isPlainRelative(segments));
        const written = absolute ? pathOf(segments) : segments.join('/');
        expect(normalisePath(written, base)).toBe(pathOf(stackNormal(absolute ? [] : CWD, segments)));
      }),
      { numRuns: 2000 },
    );
  });
});

describe('isUnder', () => {
  it('is true exactly when the segments of the path begin with those of the root, and then the path begins with the root', () => {
    fc.assert(
      fc.property(rootSegments, fc.array(name, { maxLength: 4 }), fc.boolean(), (root, rest, extend) => {
        const path = extend ? [...root, ...rest] : rest;
        const under = isUnder(pathOf(path), pathOf(root));
        expect(under).toBe(startsWithSegments(path, root));
        if (under) expect(pathOf(path).startsWith(pathOf(root))).toBe(true);
      }),
      { numRuns: 2000 },
    );
  });
});

describe('daemonPathOf', () => {
  it('guards every path under a named path, and every other path in the data dir but those under a folder open inside it', () => {
    fc.assert(
      fc.property(
        rootSegments,
        fc.array(rootSegments, { maxLength: 3 }),
        fc.array(rootSegments, { maxLength: 3 }),
        fc.array(name, { maxLength: 5 }),
        fc.boolean(),
        (data, named, open, segments, withDataDir) => {
          const dataDir = pathOf(['d', ...data]);
          const daemon = {
            protectedPaths: named.map((n) => pathOf(['d', ...data, ...n])),
            ...(withDataDir ? { dataDir, openInside: open.map((o) => pathOf(['d', ...data, 'f', ...o])) } : {}),
          };
          const path = pathOf(['d', ...data, ...segments]);
          const underNamed = named.some((n) => startsWithSegments(segments, n));
          const underOpen = open.some((o) => startsWithSegments(segments, ['f', ...o]));
          const guarded = underNamed || (withDataDir && !underOpen);
          expect(daemonPathOf(path, daemon) !== undefined).toBe(guarded);
          // Outside the data dir only a named path is guarded (none is named there).
          expect(daemonPathOf(pathOf(['elsewhere', ...segments]), daemon)).toBeUndefined();
        },
      ),
    );
  });
});

describe('decideSandbox on paths', () => {
  it('allows a root followed by any segments without ..', () => {
    fc.assert(
      fc.property(
        rootSegments,
        fc.array(
          segment.filter((s) => s !== '..'),
          { maxLength: 6 },
        ),
        (root, rest) => {
          const path = pathOf([...root, ...rest]);
          expect(isUnder(normalisePath(path, base) ?? '', pathOf(root))).toBe(true);
          expect(decideSandbox(READS, { path }, { read: [pathOf(root)] }, base)).toEqual({ allowed: true });
          expect(decideSandbox(WRITES, { path }, { write: [pathOf(root)] }, base)).toEqual({ allowed: true });
        },
      ),
      { numRuns: 1000 },
    );
  });

  it('refuses a path that climbs out of its root whenever its stack normal form is outside it, and only then', () => {
    fc.assert(
      fc.property(
        rootSegments,
        fc.array(name, { maxLength: 3 }),
        fc.integer({ min: 1, max: 3 }),
        fc.array(segment, { maxLength: 5 }),
        (root, down, extraUps, tail) => {
          const segments = [...root, ...down, ...new Array<string>(down.length + extraUps).fill('..'), ...tail];
          const outside = !startsWithSegments(stackNormal([], segments), root);
          const verdict = decideSandbox(READS, { path: pathOf(segments) }, { read: [pathOf(root)], write: [] }, base);
          expect(verdict.allowed).toBe(!outside);
          if (!verdict.allowed)
            expect(verdict).toMatchObject({ argument: 'path', reason: expect.stringContaining('security.sandbox.read') });
        },
      ),
      { numRuns: 2000 },
    );
  });

  it('allows relative paths exactly when their stack normal form from cwd is under a root', () => {
    fc.assert(
      fc.property(fc.array(rootSegments, { maxLength: 2 }), fc.array(segment, { minLength: 1, maxLength: 8 }), (roots, segments) => {
        fc.pre(isPlainRelative(segments));
        const normal = stackNormal(CWD, segments);
        const verdict = decideSandbox(READS, { path: segments.join('/') }, { read: roots.map(pathOf), write: [] }, base);
        expect(verdict.allowed).toBe(roots.some((root) => startsWithSegments(normal, root)));
      }),
      { numRuns: 2000 },
    );
  });

  it('never allows a write that it would not allow as a read under the same rules', () => {
    const roots = fc.option(fc.array(rootSegments.map(pathOf), { maxLength: 2 }), { nil: undefined });
    fc.assert(
      fc.property(roots, roots, pathLike, (read, write, path) => {
        const rules: SandboxRules = { ...(read && { read }), ...(write && { write }) };
        if (decideSandbox(WRITES, { path }, rules, base).allowed) expect(decideSandbox(READS, { path }, rules, base).allowed).toBe(true);
      }),
      { numRuns: 3000 },
    );
  });

  it('checks every path of an array: allowed exactly when each one alone is', () => {
    fc.assert(
      fc.property(fc.array(pathLike, { maxLength: 4 }), (paths) => {
        const each = paths.every((path) => decideSandbox(READS, { path }, {}, base).allowed);
        expect(decideSandbox(READS, { path: paths }, {}, base).allowed).toBe(each);
      }),
      { numRuns: 1000 },
    );
  });
});

/** The class of an IPv4 address, restated from its first two octets. */
const ipv4Class = (a: number, b: number) => ({
  loopback: a === 127 || a === 0,
  private:
    a === 10 ||
    (a === 172 && b >= 16 && b < 32) ||
    (a === 192 && b === 168) ||
    (a === 169 && b === 254) ||
    (a === 100 && b >= 64 && b < 128),
});

/** Ways to write a 32-bit IPv4 address that URL parsers (and inet_aton) accept. */
const spellings = (n: number): string[] => {
  const [a, b, c, d] = [n >>> 24, (n >>> 16) & 0xff, (n >>> 8) & 0xff, n & 0xff];
  return [
    `${a}.${b}.${c}.${d}`,
    `${n}`,
    `0x${n.toString(16)}`,
    `0${a.toString(8)}.0${b.toString(8)}.0${c.toString(8)}.0${d.toString(8)}`,
    `0x${a.toString(16)}.0x${b.toString(16)}.0x${c.toString(16)}.0x${d.toString(16)}`,
    `${a}.${b}.${(c << 8) | d}`,
    `${a}.${n & 0xffffff}`,
    `${a}.${b}.${c}.${d}.`,
    `[::ffff:${a}.${b}.${c}.${d}]`,
  ];
};

describe('hostOf', () => {
  it('reads every spelling of an IPv4 address, in any URL scheme or bare, as the address it is', () => {
    fc.assert(
      fc.property(
        fc.oneof(fc.integer({ min: 0, max: 0xffffffff }), fc.integer({ min: 0x7f000000, max: 0x7fffffff }), fc.constant(0xa9fea9fe)),
        fc.constantFrom('http://', 'https://', 'ws://', 'ftp://', 'gopher://', 'x-custom://', 'http://user@', ''),
        fc.constantFrom('', '/', ':8080/', '/path?q#f'),
        (n, prefix, suffix) => {
          const [a, b] = [n >>> 24, (n >>> 16) & 0xff];
          for (const spelled of spellings(n)) {
            const found = hostOf(`${prefix}${spelled}${suffix}`);
            expect(found, spelled).toMatchObject(ipv4Class(a, b));
            if (!spelled.startsWith('[')) expect(found?.host).toBe(`${a}.${b}.${(n >>> 8) & 0xff}.${n & 0xff}`);
          }
        },
      ),
      { numRuns: 500 },
    );
  });

  it('takes the host after the last @, whatever the userinfo before it', () => {
    fc.assert(
      fc.property(fc.array(fc.constantFrom('user', 'evil.com', 'localhost', '127.0.0.1', 'a:b', ''), { maxLength: 3 }), (userinfo) => {
        const prefix = userinfo.map((part) => `${part}@`).join('');
        expect(hostOf(`http://${prefix}good.example/x`)?.host).toBe('good.example');
      }),
    );
  });

  it('never throws and gives a host in normal form or null', () => {
    fc.assert(
      fc.property(fc.oneof(fc.string({ maxLength: 40 }), fc.string({ unit: 'binary', maxLength: 40 })), (target) => {
        const found = hostOf(target);
        if (found !== null) {
          expect(found.host).toBe(found.host.toLowerCase());
          expect(found.host.endsWith('.')).toBe(false);
          expect(hostOf(found.host)?.host).toBe(found.host);
        }
      }),
      { numRuns: 3000 },
    );
  });
});

describe('decideSandbox on network arguments', () => {
  const label = fc.constantFrom('a', 'b', 'ex', 'com', 'net', 'evil');
  const CONNECTS: ToolAccess = { network: ['url'] };

  it('lets *.suffix through exactly the names with more labels that end in the suffix labels', () => {
    fc.assert(
      fc.property(fc.array(label, { minLength: 1, maxLength: 3 }), fc.array(label, { minLength: 1, maxLength: 5 }), (suffix, host) => {
        const verdict = decideSandbox(CONNECTS, { url: `https://${host.join('.')}/` }, { network: [`*.${suffix.join('.')}`] }, base);
        const under = host.length > suffix.length && host.slice(host.length - suffix.length).join('.') === suffix.join('.');
        expect(verdict.allowed).toBe(under);
      }),
      { numRuns: 2000 },
    );
  });

  it('refuses every declared network argument that is present when there is no network', () => {
    fc.assert(
      fc.property(
        fc.uniqueArray(fc.constantFrom('url', 'host', 'target'), { minLength: 1, maxLength: 3 }),
        fc.oneof(fc.webUrl(), fc.domain(), fc.anything()).filter((value) => value !== undefined),
        fc.constantFrom<SandboxRules>({}, { network: false }, { network: false, loopback: true }),
        (names, value, rules) => {
          const verdict = decideSandbox({ network: names }, { [names[names.length - 1] ?? 'url']: value }, rules, base);
          expect(verdict).toMatchObject({ allowed: false, argument: names[names.length - 1] });
        },
      ),
      { numRuns: 1000 },
    );
  });

  it('never allows loopback or a private address that the rules do not name', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 0xffffffff }), fc.boolean(), (n, loopbackRule) => {
        const [a, b] = [n >>> 24, (n >>> 16) & 0xff];
        const kind = ipv4Class(a, b);
        const verdict = decideSandbox(CONNECTS, { url: `http://${n}/` }, { network: true, loopback: loopbackRule }, base);
        expect(verdict.allowed).toBe(!(kind.loopback && !loopbackRule) && !kind.private);
      }),
      { numRuns: 1000 },
    );
  });
});

describe('decideSandbox on anything', () => {
  it('never throws, whatever the access, arguments and rules', () => {
    const access = fc.oneof(
      fc.record({ read: fc.array(fc.string()), write: fc.array(fc.string()), network: fc.array(fc.string()) }, { requiredKeys: [] }),
      fc.constantFrom<ToolAccess>({ read: ['path'], write: ['path'], network: ['path'] }),
      fc.anything(),
    );
    const rules = fc.oneof(
      fc.record(
        {
          read: fc.array(pathLike),
          write: fc.array(pathLike),
          network: fc.oneof(fc.boolean(), fc.array(fc.string())),
          loopback: fc.boolean(),
        },
        { requiredKeys: [] },
      ),
      fc.anything(),
    );
    fc.assert(
      fc.property(access, fc.oneof(fc.anything(), fc.record({ path: fc.anything() })), rules, (a, args, r) => {
        const verdict = decideSandbox(a as ToolAccess, args as Record<string, unknown>, r as SandboxRules, base);
        expect(typeof verdict.allowed).toBe('boolean');
        if (!verdict.allowed) {
          expect(typeof verdict.reason).toBe('string');
          expect(typeof verdict.argument).toBe('string');
        }
      }),
      { numRuns: 3000 },
    );
  });
});
