/**
 * A watched vault: the daemon trusts the vault as last read until its folder changes, so a call
 * costs no look at the file, and still every `homed secret set` or `rm` reaches the next use: a
 * removed or changed secret once the watcher tells, a name set a moment ago at once (a miss
 * looks again), a folder removed and made again as well as one that stays. A value the vault
 * replaced or removed is still scrubbed, as the name it had.
 */
import { rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { SECRETS_DIR, SecretVault } from '../../adapters/secrets/secretVault.ts';
import { SecretAliases } from '../../actors/security/secretAliases.ts';
import { useTempDir } from '../support/tempDir.ts';

const tempDir = useTempDir();
const opened: SecretAliases[] = [];
afterEach(() => {
  for (const aliases of opened.splice(0)) aliases.close();
});

const TOOL = 'files_write';
const WAIT = { timeout: 5_000, interval: 10 };

const watched = (dir: string): SecretAliases => {
  const aliases = new SecretAliases(dir);
  opened.push(aliases);
  expect(aliases.watch()).toBe(true);
  return aliases;
};

const fillOf = (aliases: SecretAliases, name: string) => aliases.fill({ text: `use @{${name}}` }, TOOL);

describe('a watched vault', () => {
  it('makes the vault folder private when there is none yet', () => {
    const dir = tempDir();
    watched(dir);
    expect(statSync(join(dir, SECRETS_DIR)).mode & 0o777).toBe(0o700);
    expect(SecretVault.open(dir).names()).toEqual([]);
  });

  it('fills a secret set a moment ago, before the watcher has told of it', () => {
    const dir = tempDir();
    const aliases = watched(dir);
    expect(fillOf(aliases, 'API_KEY').unknown).toEqual(['API_KEY']);
    SecretVault.open(dir).set('API_KEY', 'sk-watch-new-1', [TOOL]);
    expect(fillOf(aliases, 'API_KEY')).toMatchObject({ args: { text: 'use sk-watch-new-1' }, filled: ['API_KEY'] });
  });

  it('stops filling a removed secret and scrubs a changed one by its new value once the watcher tells', async () => {
    const dir = tempDir();
    SecretVault.open(dir).set('API_KEY', 'sk-watch-old-1', [TOOL]);
    SecretVault.open(dir).set('GONE', 'sk-watch-gone-1', [TOOL]);
    const aliases = watched(dir);
    expect(fillOf(aliases, 'GONE').filled).toEqual(['GONE']);
    SecretVault.open(dir).remove('GONE');
    SecretVault.open(dir).set('API_KEY', 'sk-watch-changed-2', [TOOL]);
    await vi.waitFor(() => expect(fillOf(aliases, 'GONE').unknown).toEqual(['GONE']), WAIT);
    expect(aliases.scrub('a sk-watch-changed-2 b')).toBe('a @{API_KEY} b');
    expect(fillOf(aliases, 'API_KEY').args).toEqual({ text: 'use sk-watch-changed-2' });
  });

  it('follows the vault folder when it is removed and made again', async () => {
    const dir = tempDir();
    SecretVault.open(dir).set('API_KEY', 'sk-watch-first-1', [TOOL]);
    const aliases = watched(dir);
    expect(aliases.scrub('x sk-watch-first-1')).toBe('x @{API_KEY}');
    rmSync(join(dir, SECRETS_DIR), { recursive: true });
    await vi.waitFor(() => expect(aliases.grants()).toEqual([]), WAIT);
    SecretVault.open(dir).set('OTHER', 'sk-watch-other-2', [TOOL]);
    await vi.waitFor(() => expect(aliases.scrub('y sk-watch-other-2')).toBe('y @{OTHER}'), WAIT);
    SecretVault.open(dir).remove('OTHER');
    await vi.waitFor(() => expect(aliases.grants()).toEqual([]), WAIT);
    // Removed from the vault, a value is still scrubbed as the name it had; one whose vault was
    // deleted whole is not (the vault keeps what it retired).
    expect(aliases.scrub('x sk-watch-first-1 y sk-watch-other-2')).toBe('x sk-watch-first-1 y @{OTHER}');
  });

  it('looks at the file on every use when it is not watched', () => {
    const dir = tempDir();
    SecretVault.open(dir).set('API_KEY', 'sk-unwatched-1', [TOOL]);
    const aliases = new SecretAliases(dir);
    expect(aliases.scrub('sk-unwatched-1')).toBe('@{API_KEY}');
    SecretVault.open(dir).remove('API_KEY');
    expect(aliases.grants()).toEqual([]);
    expect(aliases.scrub('sk-unwatched-1')).toBe('@{API_KEY}');
  });
});
