/**
 * The sandbox decider rule by rule, and the classic escapes: paths that climb out with `..`, hide
 * behind `~` or a `file:` URL, smuggle a NUL byte or hide one bad path in an array; hosts that are
 * loopback or cloud metadata in disguise (short, decimal, hex and octal IPv4, IPv6 and IPv4-mapped
 * IPv6, userinfo, trailing dots, upper case); and suffix globs that must not match look-alikes.
 */
import { describe, expect, it } from 'vitest';
import {
  decideSandbox,
  hostOf,
  isUnder,
  normalisePath,
  type SandboxBase,
  type SandboxRules,
  type ToolAccess,
} from '../../machines/security/index.ts';

const base: SandboxBase = { cwd: '/home/u/work', home: '/home/u' };

const READS: ToolAccess = { read: ['path'] };
const WRITES: ToolAccess = { write: ['path'] };
const CONNECTS: ToolAccess = { network: ['url'] };

const read = (path: unknown, rules: SandboxRules = {}) => decideSandbox(READS, { path }, rules, base);
const write = (path: unknown, rules: SandboxRules = {}) => decideSandbox(WRITES, { path }, rules, base);
const connect = (url: unknown, rules: SandboxRules) => decideSandbox(CONNECTS, { url }, rules, base);

describe('normalisePath', () => {
  it('joins relative paths to cwd and collapses ., .., repeated and trailing slashes', () => {
    expect(normalisePath('notes/a.txt', base)).toBe('/home/u/work/notes/a.txt');
    expect(normalisePath('.', base)).toBe('/home/u/work');
    expect(normalisePath('./a/./b/', base)).toBe('/home/u/work/a/b');
    expect(normalisePath('//a///b//', base)).toBe('/a/b');
    expect(normalisePath('../../etc/passwd', base)).toBe('/home/etc/passwd');
    expect(normalisePath('/work/x/../../etc', base)).toBe('/etc');
  });

  it('never climbs above /', () => {
    expect(normalisePath('/../../..', base)).toBe('/');
    expect(normalisePath('../../../../../../etc', base)).toBe('/etc');
  });

  it('expands ~ and ~/ to home, and nothing else that starts with ~', () => {
    expect(normalisePath('~', base)).toBe('/home/u');
    expect(normalisePath('~/.ssh/id_rsa', base)).toBe('/home/u/.ssh/id_rsa');
    expect(normalisePath('~/../../etc', base)).toBe('/etc');
    expect(normalisePath('~root/x', base)).toBe('/home/u/work/~root/x');
    expect(normalisePath('a/~/b', base)).toBe('/home/u/work/a/~/b');
  });

  it('keeps percent-encoding and backslashes in plain paths as the characters they are', () => {
    expect(normalisePath('%2e%2e/%2e%2e/etc', base)).toBe('/home/u/work/%2e%2e/%2e%2e/etc');
    expect(normalisePath('..\\..\\etc', base)).toBe('/home/u/work/..\\..\\etc');
  });

  it('decodes file: URLs to their path, with an empty or localhost host only', () => {
    expect(normalisePath('file:///etc/passwd', base)).toBe('/etc/passwd');
    expect(normalisePath('file://localhost/etc/passwd', base)).toBe('/etc/passwd');
    expect(normalisePath('FILE://LOCALHOST/tmp/a%20b', base)).toBe('/tmp/a b');
    expect(normalisePath('file:/home/u/work/%2e%2e/%2E%2E/etc', base)).toBe('/home/etc');
    expect(normalisePath('file://localhost', base)).toBe('/');
    expect(normalisePath('file://evil/etc', base)).toBeNull();
    expect(normalisePath('file://127.0.0.1/etc', base)).toBeNull();
  });

  it('refuses file: URLs that parsers could read two ways', () => {
    expect(normalisePath('file:///home/u/work/a\\b/../../x', base)).toBeNull();
    expect(normalisePath('file:///home/u/work/x?/../../../etc', base)).toBeNull();
    expect(normalisePath('file:///home/u/work/x#/../../etc', base)).toBeNull();
    expect(normalisePath('file:///home/u/work/.\n./etc', base)).toBeNull();
    expect(normalisePath(' file:///etc/passwd', base)).toBeNull();
    expect(normalisePath('fi\tle:///etc/passwd', base)).toBeNull();
    expect(normalisePath('file:///a%zz', base)).toBeNull();
    expect(normalisePath('file:///a%00b', base)).toBeNull();
    expect(normalisePath('file:relative', base)).toBeNull();
  });

  it('is null for what cannot be a path', () => {
    expect(normalisePath('a\0b', base)).toBeNull();
    expect(normalisePath('', base)).toBeNull();
    expect(normalisePath(42 as unknown as string, base)).toBeNull();
    expect(normalisePath(undefined as unknown as string, base)).toBeNull();
  });

  it('cannot resolve relative paths against a base that is not a path', () => {
    expect(normalisePath('a', { cwd: '', home: '/h' })).toBeNull();
    expect(normalisePath('~/a', { cwd: '/c', home: 'x\0' })).toBeNull();
    expect(normalisePath('/abs', { cwd: '', home: '' })).toBe('/abs');
  });
});

describe('isUnder', () => {
  it('is true for the root and what lies inside it, and false for a sibling sharing a prefix', () => {
    expect(isUnder('/a/b', '/a/b')).toBe(true);
    expect(isUnder('/a/b/c', '/a/b')).toBe(true);
    expect(isUnder('/a/bc', '/a/b')).toBe(false);
    expect(isUnder('/a', '/a/b')).toBe(false);
    expect(isUnder('/anything', '/')).toBe(true);
  });
});

describe('paths', () => {
  it('allows a call that declares no access or none of whose declared arguments is present', () => {
    expect(decideSandbox(undefined, { path: '/etc/passwd' }, {}, base)).toEqual({ allowed: true });
    expect(decideSandbox({}, { path: '/etc/passwd' }, {}, base)).toEqual({ allowed: true });
    expect(decideSandbox(READS, { other: '/etc/passwd' }, {}, base)).toEqual({ allowed: true });
    expect(decideSandbox(READS, { path: undefined }, {}, base)).toEqual({ allowed: true });
  });

  it('by default reads and writes only under cwd', () => {
    expect(read('notes.txt')).toEqual({ allowed: true });
    expect(write('/home/u/work/out/a.txt')).toEqual({ allowed: true });
    expect(read('/home/u/workshop/a')).toMatchObject({ allowed: false, argument: 'path' });
    expect(write('/tmp/x')).toMatchObject({ allowed: false, argument: 'path' });
  });

  it('refuses the classic escapes with a reason that names the path, the roots and the setting', () => {
    expect(read('/etc/passwd')).toEqual({
      allowed: false,
      argument: 'path',
      reason: "'path' is /etc/passwd, outside the sandbox's read roots (/home/u/work); add a root to security.sandbox.read to allow it",
    });
    expect(read('../../etc/passwd')).toEqual({
      allowed: false,
      argument: 'path',
      reason:
        "'path' is /home/etc/passwd (written \"../../etc/passwd\"), outside the sandbox's read roots (/home/u/work); add a root to security.sandbox.read to allow it",
    });
    expect(read('/home/u/work/x/../../etc')).toMatchObject({ allowed: false });
    expect(read('~/.ssh/id_rsa')).toMatchObject({ allowed: false, reason: expect.stringContaining('/home/u/.ssh/id_rsa') });
    expect(read('file:///etc/passwd')).toMatchObject({ allowed: false, reason: expect.stringContaining('/etc/passwd') });
    expect(write('/etc/cron.d/x')).toMatchObject({
      allowed: false,
      reason: expect.stringContaining("outside the sandbox's write roots (/home/u/work); add a root to security.sandbox.write"),
    });
  });

  it('checks lexically, without following symlinks: a path inside a root is allowed whatever it links to', () => {
    expect(read('/home/u/work/link-to-etc/passwd')).toEqual({ allowed: true });
    expect(read('/home/u/work/link/../inside')).toEqual({ allowed: true });
  });

  it('refuses what cannot be a path, saying so', () => {
    expect(read('a\0b')).toMatchObject({ allowed: false, argument: 'path', reason: expect.stringContaining('cannot be read as a path') });
    expect(read('file://evil/etc')).toMatchObject({ allowed: false, reason: expect.stringContaining('cannot be read as a path') });
    expect(read('')).toMatchObject({ allowed: false });
  });

  it('refuses a non-string value in a path argument', () => {
    for (const value of [42, null, {}, true, ['ok', 7]]) {
      expect(read(value)).toMatchObject({ allowed: false, argument: 'path', reason: expect.stringContaining('must be a path string') });
    }
  });

  it('checks every path of an array, and names the one that is outside', () => {
    expect(read(['a.txt', 'b/c.txt'])).toEqual({ allowed: true });
    expect(read([])).toEqual({ allowed: true });
    expect(read(['a.txt', '../../../etc/shadow', 'b.txt'])).toMatchObject({
      allowed: false,
      argument: 'path',
      reason: expect.stringMatching(/^'path\[1\]' is \/etc\/shadow/),
    });
  });

  it('reads under read or write roots, and writes only under write roots', () => {
    const rules: SandboxRules = { read: ['/data'], write: ['~/out'] };
    expect(read('/data/x', rules)).toEqual({ allowed: true });
    expect(read('/home/u/out/x', rules)).toEqual({ allowed: true });
    expect(write('/home/u/out/x', rules)).toEqual({ allowed: true });
    expect(write('/data/x', rules)).toMatchObject({ allowed: false, reason: expect.stringContaining('write roots (/home/u/out)') });
    expect(read('/home/u/work/x', rules)).toMatchObject({
      allowed: false,
      reason: expect.stringContaining('read roots (/data, /home/u/out)'),
    });
  });

  it('defaults each of read and write to cwd on its own', () => {
    expect(read('/home/u/work/x', { write: ['/out'] })).toEqual({ allowed: true });
    expect(read('/out/x', { write: ['/out'] })).toEqual({ allowed: true });
    expect(write('/home/u/work/x', { read: ['/data'] })).toEqual({ allowed: true });
    expect(write('/data/x', { read: ['/data'] })).toMatchObject({ allowed: false });
    // Write implies read, so with write left to its default cwd stays readable; `write: []` takes it away.
    expect(read('/home/u/work/x', { read: ['/data'] })).toEqual({ allowed: true });
    expect(read('/home/u/work/x', { read: ['/data'], write: [] })).toMatchObject({ allowed: false });
  });

  it('allows nothing with empty root lists, and everything under /', () => {
    expect(read('/home/u/work/x', { read: [], write: [] })).toMatchObject({ allowed: false, reason: expect.stringContaining('(none)') });
    expect(read('/etc/passwd', { read: ['/'] })).toEqual({ allowed: true });
  });

  it('checks reads, writes and network arguments of one call and refuses on the first that fails', () => {
    const access: ToolAccess = { read: ['from'], write: ['to'], network: ['url'] };
    const rules: SandboxRules = { write: ['/home/u/work/out'], network: ['example.com'] };
    expect(decideSandbox(access, { from: 'a', to: 'out/b', url: 'https://example.com/' }, rules, base)).toEqual({ allowed: true });
    expect(decideSandbox(access, { from: 'a', to: 'b', url: 'https://example.com/' }, rules, base)).toMatchObject({ argument: 'to' });
    expect(decideSandbox(access, { from: 'a', to: 'out/b', url: 'https://evil.com/' }, rules, base)).toMatchObject({ argument: 'url' });
  });

  it('does not take a declared argument from the prototype', () => {
    expect(decideSandbox({ read: ['toString'] }, {}, {}, base)).toEqual({ allowed: true });
  });
});

describe('hostOf', () => {
  it('reads the host of URLs of any scheme and of bare host[:port]', () => {
    expect(hostOf('https://example.com/a?b#c')).toEqual({ host: 'example.com', loopback: false, private: false });
    expect(hostOf('wss://Example.COM:443/socket')?.host).toBe('example.com');
    expect(hostOf('gopher://example.com:70/')?.host).toBe('example.com');
    expect(hostOf('ftp://user:pw@files.example.com/')?.host).toBe('files.example.com');
    expect(hostOf('example.com')?.host).toBe('example.com');
    expect(hostOf('example.com:8080')?.host).toBe('example.com');
    expect(hostOf('example.com:8080/path')?.host).toBe('example.com');
    expect(hostOf('//example.com/x')?.host).toBe('example.com');
    expect(hostOf('  https://example.com  ')?.host).toBe('example.com');
  });

  it('sees through every spelling of 127.0.0.1', () => {
    for (const target of [
      'http://127.1',
      'http://2130706433/',
      'http://0x7f000001',
      'http://0177.0.0.1/',
      'http://0x7f.1/',
      'http://127.0.0.1./',
      'http://0x7f.1../',
      'gopher://0x7f.1/',
      'ftp://127.1/',
      'foo://2130706433/',
      'http://127%2e0%2e0%2e1/',
      '127.1:80',
    ]) {
      expect(hostOf(target), target).toEqual({ host: '127.0.0.1', loopback: true, private: false });
    }
    expect(hostOf('http://127.255.1.2')?.loopback).toBe(true);
  });

  it('reads loopback IPv6, in brackets and bare, and IPv4-mapped IPv6', () => {
    expect(hostOf('http://[::1]:8080')).toEqual({ host: '[::1]', loopback: true, private: false });
    expect(hostOf('http://[0:0:0:0:0:0:0:1]/')?.host).toBe('[::1]');
    expect(hostOf('::1')?.loopback).toBe(true);
    expect(hostOf('[::1]:22')?.loopback).toBe(true);
    expect(hostOf('http://[::ffff:127.0.0.1]')).toEqual({ host: '[::ffff:7f00:1]', loopback: true, private: false });
    expect(hostOf('http://[::ffff:7f00:1]')?.loopback).toBe(true);
    expect(hostOf('http://[::]/')?.loopback).toBe(true);
    expect(hostOf('http://[64:ff9b::127.0.0.1]/')?.loopback).toBe(true);
  });

  it('reads localhost in every case, with a trailing dot, and its subdomains as loopback', () => {
    for (const target of [
      'http://localhost./',
      'HTTP://LOCALHOST',
      'localhost',
      'ws://LocalHost.:9229/',
      'http://api.localhost/',
      'http://ｌｏｃａｌｈｏｓｔ/',
    ]) {
      expect(hostOf(target), target).toMatchObject({ loopback: true });
    }
    expect(hostOf('http://localhost./')?.host).toBe('localhost');
    expect(hostOf('http://notlocalhost/')?.loopback).toBe(false);
  });

  it('reads 0.0.0.0 as loopback', () => {
    expect(hostOf('http://0.0.0.0:8080')).toEqual({ host: '0.0.0.0', loopback: true, private: false });
    expect(hostOf('http://0/')?.loopback).toBe(true);
  });

  it('takes the host after the last @ of the userinfo', () => {
    expect(hostOf('http://user@evil@localhost')).toMatchObject({ host: 'localhost', loopback: true });
    expect(hostOf('http://user@evil.com@good.com/')?.host).toBe('good.com');
    expect(hostOf('http://good.com@169.254.169.254/')?.private).toBe(true);
    expect(hostOf('http://a@good.com/@evil.com')?.host).toBe('good.com');
  });

  it('reads private and link-local addresses, cloud metadata among them', () => {
    for (const target of [
      '169.254.169.254',
      'http://169.254.169.254/latest/meta-data/',
      'http://10.1.2.3',
      'http://172.16.0.1',
      'http://172.31.255.255',
      'http://192.168.1.1',
      'http://0xa9fea9fe/',
      'http://[fd00:ec2::254]/',
      'http://[fe80::1]/',
      'fe80::1',
      'http://[::ffff:10.0.0.1]/',
      'http://[::ffff:169.254.169.254]/',
    ]) {
      expect(hostOf(target), target).toMatchObject({ loopback: false, private: true });
    }
    for (const target of [
      'http://172.15.0.1',
      'http://172.32.0.1',
      'http://192.169.0.1',
      'http://8.8.8.8',
      'http://[2001:db8::1]/',
      'http://11.0.0.1',
    ]) {
      expect(hostOf(target), target).toMatchObject({ loopback: false, private: false });
    }
  });

  it('is null for what names no host unambiguously', () => {
    for (const target of [
      '',
      'file:///etc/passwd',
      'mailto:a@b.com',
      'http:evil.com',
      'http://',
      'http:///x',
      'http://evil.com\\@good.com/',
      'http://good.com\\x/@evil.com',
      'http://evil\n.com/',
      'http://ev il.com/',
      'http://1.2.3.4.5/',
      'http://4294967296/',
      'http://[::1/',
      'http://[::1]x/',
      'http://[fe80::1%25eth0]/',
      'http://host:port/',
      'http://a:b:c/',
      'http://a%40b/',
      'http://%2e/',
    ]) {
      expect(hostOf(target), JSON.stringify(target)).toBeNull();
    }
    expect(hostOf(7 as unknown as string)).toBeNull();
  });
});

describe('network', () => {
  it('refuses every network argument when network is false or absent', () => {
    for (const rules of [{ network: false }, {}] as SandboxRules[]) {
      expect(connect('https://example.com', rules)).toMatchObject({
        allowed: false,
        argument: 'url',
        reason: expect.stringContaining(
          'allows no network access; set security.sandbox.network to true, or list the hosts in security.sandbox.hosts',
        ),
      });
    }
  });

  it('allows any public host when network is true', () => {
    expect(connect('https://example.com/x', { network: true })).toEqual({ allowed: true });
    expect(connect('8.8.8.8:53', { network: true })).toEqual({ allowed: true });
  });

  it('refuses loopback unless loopback is set, whatever the spelling', () => {
    for (const url of [
      'http://127.1',
      'http://[::1]:8080',
      'http://0x7f000001',
      'http://user@evil@localhost',
      'http://localhost./',
      'HTTP://LOCALHOST',
      'http://[::ffff:127.0.0.1]',
      'http://0.0.0.0/',
    ]) {
      expect(connect(url, { network: true }), url).toMatchObject({
        allowed: false,
        argument: 'url',
        reason: expect.stringContaining(
          'a loopback address (local services are where keys live); set security.sandbox.loopback to true to allow it',
        ),
      });
      expect(connect(url, { network: true, loopback: true }), url).toEqual({ allowed: true });
    }
  });

  it('with a list, still wants loopback hosts listed, and loopback set', () => {
    expect(connect('http://localhost:3000', { network: ['example.com'], loopback: true })).toMatchObject({
      allowed: false,
      reason: expect.stringContaining('add localhost to security.sandbox.hosts'),
    });
    expect(connect('http://localhost:3000', { network: ['localhost'] })).toMatchObject({
      allowed: false,
      reason: expect.stringContaining('set security.sandbox.loopback to true'),
    });
    expect(connect('http://localhost:3000', { network: ['localhost'], loopback: true })).toEqual({ allowed: true });
  });

  it('refuses private and link-local addresses unless listed by exact host', () => {
    expect(connect('169.254.169.254', { network: true })).toMatchObject({
      allowed: false,
      reason: expect.stringContaining(
        'private or link-local address (cloud metadata lives at 169.254.169.254), allowed only when listed by exact host; list 169.254.169.254 itself in security.sandbox.hosts',
      ),
    });
    expect(connect('http://10.0.0.5/', { network: ['*.0.0.5', 'example.com'] })).toMatchObject({ allowed: false });
    expect(connect('http://10.0.0.5/', { network: ['10.0.0.5'] })).toEqual({ allowed: true });
    expect(connect('http://0xa000005/', { network: ['10.0.0.5'] })).toEqual({ allowed: true });
    expect(connect('http://[fe80::1]/', { network: ['[fe80::1]'] })).toEqual({ allowed: true });
  });

  it('with a list, allows only the hosts it matches; *.example.com matches names under example.com only', () => {
    const rules: SandboxRules = { network: ['*.example.com', 'api.other.org'] };
    expect(connect('https://a.example.com/', rules)).toEqual({ allowed: true });
    expect(connect('https://deep.a.example.com/', rules)).toEqual({ allowed: true });
    expect(connect('https://A.EXAMPLE.COM./', rules)).toEqual({ allowed: true });
    expect(connect('https://api.other.org:8443/', rules)).toEqual({ allowed: true });
    for (const url of [
      'https://example.com/',
      'https://example.com.evil.net/',
      'https://evilexample.com/',
      'https://other.org/',
      'https://x.api.other.org/',
    ]) {
      expect(connect(url, rules), url).toMatchObject({
        allowed: false,
        reason: expect.stringContaining('not a host security.sandbox.hosts lists (*.example.com, api.other.org)'),
      });
    }
    expect(connect('https://a.example.com@evil.net/', rules)).toMatchObject({
      allowed: false,
      reason: expect.stringContaining('evil.net'),
    });
  });

  it('reads list entries the way it reads targets', () => {
    expect(connect('https://example.com/', { network: ['EXAMPLE.COM.'] })).toEqual({ allowed: true });
    expect(connect('https://example.com/', { network: ['https://example.com/'] })).toEqual({ allowed: true });
    expect(connect('https://example.com/', { network: [] })).toMatchObject({
      allowed: false,
      reason: expect.stringContaining('lists (none)'),
    });
  });

  it('refuses what it cannot read as a host, and a file: URL as a path, not a host', () => {
    expect(connect('http://evil.com\\@good.com/', { network: true })).toMatchObject({
      allowed: false,
      reason: expect.stringContaining('whose host can be read unambiguously'),
    });
    expect(connect('file:///etc/passwd', { network: true })).toMatchObject({
      allowed: false,
      reason: expect.stringContaining('a file: URL, which is a path'),
    });
    expect(connect(42, { network: true })).toMatchObject({
      allowed: false,
      reason: expect.stringContaining('must be a URL or host string'),
    });
  });

  it('checks every target of an array', () => {
    expect(connect(['https://example.com', 'http://127.1'], { network: true })).toMatchObject({
      allowed: false,
      reason: expect.stringMatching(/^'url\[1\]' connects to 127\.0\.0\.1/),
    });
  });
});

describe('robustness', () => {
  it('never throws, whatever the access, arguments and rules', () => {
    const hostile = Object.defineProperty({}, 'path', {
      enumerable: true,
      get() {
        throw new Error('boom');
      },
    });
    expect(decideSandbox(READS, hostile, {}, base)).toMatchObject({ allowed: false, argument: 'path' });
    expect(() => decideSandbox(READS, null as never, {}, base)).not.toThrow();
    expect(() => decideSandbox({ read: 'path' } as never, { path: '/etc' }, { read: '/' } as never, base)).not.toThrow();
    expect(() => decideSandbox(READS, { path: 'a' }, null as never, base)).not.toThrow();
    expect(() => decideSandbox(READS, { path: 'a' }, {}, null as never)).not.toThrow();
    const throwing = new Proxy(
      {},
      {
        get() {
          throw new Error('boom');
        },
      },
    );
    expect(decideSandbox(throwing as ToolAccess, { path: 'a' }, {}, base)).toMatchObject({ allowed: false });
    expect(decideSandbox(READS, { path: 'a' }, throwing as SandboxRules, base)).toMatchObject({ allowed: false });
  });
});
