/**
 * The network sandbox where names lead (red team round 2: the machine's own name, resolving to
 * 127.0.0.1, reached a local server past `loopback: false`).
 */
import { describe, expect, it } from 'vitest';
import { resolvedHostRefusal } from '../../actors/security/resolvedHosts.ts';

const ADDRESSES: Readonly<Record<string, readonly string[]>> = {
  vm: ['127.0.1.1'],
  'metadata.internal': ['169.254.169.254'],
  'dual.test': ['93.184.216.34', '::1'],
  'example.com': ['93.184.216.34'],
};
const asked: string[] = [];
const resolve = async (host: string): Promise<readonly string[]> => {
  asked.push(host);
  const found = ADDRESSES[host];
  if (!found) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: 'ENOTFOUND' });
  return found;
};
const FETCH = { network: ['url'] };
const refusalOf = (url: unknown, rules: Parameters<typeof resolvedHostRefusal>[2] = { network: true }) =>
  resolvedHostRefusal(FETCH, { url }, rules, resolve);

describe('resolvedHostRefusal', () => {
  it('refuses a name that resolves to loopback or a private address, in any of its addresses', async () => {
    expect(await refusalOf('http://vm:8080/v1/models')).toContain("'url' connects to vm, which resolves to 127.0.1.1, a loopback address");
    expect(await refusalOf(['https://example.com/', 'dual.test:443'])).toContain('dual.test, which resolves to ::1');
    expect(await refusalOf('http://metadata.internal/latest')).toContain('a private or link-local address');
  });

  it('lets through what the rules allow: loopback when allowed, a private address whose name is listed, a public one', async () => {
    expect(await refusalOf('http://vm/', { network: true, loopback: true })).toBeUndefined();
    expect(await refusalOf('http://metadata.internal/', { network: ['metadata.internal'] })).toBeUndefined();
    expect(await refusalOf('https://example.com/')).toBeUndefined();
  });

  it('looks up names only: not an address as written, not an unreadable target, and leaves a name that does not resolve to the tool', async () => {
    asked.length = 0;
    expect(await refusalOf('http://93.184.216.34/')).toBeUndefined();
    expect(await refusalOf('http://[2001:db8::1]/')).toBeUndefined();
    expect(await refusalOf(42)).toBeUndefined();
    expect(asked).toEqual([]);
    expect(await refusalOf('https://nowhere.invalid/')).toBeUndefined();
    expect(asked).toEqual(['nowhere.invalid']);
    expect(await resolvedHostRefusal({ read: ['path'] }, { path: 'http://vm/' }, { network: true }, resolve)).toBeUndefined();
  });
});
