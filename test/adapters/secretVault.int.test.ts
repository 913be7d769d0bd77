/**
 * The credential vault on disk: a value comes back as it was stored and is nowhere in clear in
 * the data dir; the files are private; names are checked; a replaced key, a missing key and a
 * damaged vault are each refused with what to do, never with a value.
 */
import { readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { RETIRED_KEPT, SECRETS_DIR, SecretVault, SecretVaultError } from '../../adapters/secrets/secretVault.ts';
import { everyFileText } from '../support/everyFile.ts';
import { useTempDir } from '../support/tempDir.ts';

const tempDir = useTempDir();
const VALUE = 'sk-live-very-secret-0123456789';

describe('the secret vault', () => {
  it('gives back what was stored, from a fresh open, and keeps it nowhere in clear', () => {
    const dir = tempDir();
    SecretVault.open(dir).set('OPENAI_KEY', VALUE);
    SecretVault.open(dir).set('OTHER', 'second value');
    const vault = SecretVault.open(dir);
    expect(vault.names()).toEqual(['OPENAI_KEY', 'OTHER']);
    expect(vault.get('OPENAI_KEY')).toBe(VALUE);
    expect(everyFileText(dir)).not.toContain(VALUE);
    expect(everyFileText(dir)).not.toContain(Buffer.from(VALUE).toString('base64'));
    expect(statSync(join(dir, SECRETS_DIR)).mode & 0o777).toBe(0o700);
    for (const file of ['vault.key', 'vault.json']) expect(statSync(join(dir, SECRETS_DIR, file)).mode & 0o777).toBe(0o600);
  });

  it('keeps the values it replaced or removed, sealed, the newest 64, for scrubbing; setting the same value again keeps nothing', () => {
    const dir = tempDir();
    const vault = SecretVault.open(dir);
    vault.set('ROT', 'tok-first-value-01');
    vault.set('ROT', 'tok-first-value-01');
    expect(vault.retired()).toEqual([]);
    vault.set('ROT', 'tok-second-value-02');
    vault.remove('ROT');
    expect(SecretVault.open(dir).retired()).toEqual([
      ['ROT', 'tok-first-value-01'],
      ['ROT', 'tok-second-value-02'],
    ]);
    expect(readFileSync(join(dir, SECRETS_DIR, 'vault.json'), 'utf8')).not.toContain('tok-');
    for (let i = 0; i < RETIRED_KEPT; i++) vault.set('MANY', `tok-many-value-${String(i).padStart(3, '0')}`);
    const kept = SecretVault.open(dir).retired();
    expect(kept).toHaveLength(RETIRED_KEPT);
    expect(kept[0]).toEqual(['ROT', 'tok-second-value-02']);
    expect(kept.at(-1)).toEqual(['MANY', 'tok-many-value-062']);
  });

  it('removes a secret, and says so only when there was one', () => {
    const dir = tempDir();
    SecretVault.open(dir).set('GONE', VALUE);
    expect(SecretVault.open(dir).remove('GONE')).toBe(true);
    expect(SecretVault.open(dir).remove('GONE')).toBe(false);
    expect(() => SecretVault.open(dir).get('GONE')).toThrow(/no secret GONE in the vault; set it with 'homed secret set GONE'/);
  });

  it('refuses a name that is not one, an empty value, one too short to keep out of what the model sees, and one over 64 KiB', () => {
    const vault = SecretVault.open(tempDir());
    for (const name of ['lower', '1ST', 'WITH-DASH', '', 'A'.repeat(65)]) expect(() => vault.set(name, VALUE)).toThrow(SecretVaultError);
    expect(() => vault.set('EMPTY', '')).toThrow(/empty/);
    expect(() => vault.set('PIN', 'Zq9')).toThrow(/has 3 character\(s\); a secret needs at least 4/);
    vault.set('PIN', 'Zq9x');
    expect(vault.get('PIN')).toBe('Zq9x');
    // Counted in bytes: 32 Ki two-byte characters are 64 KiB, one more is over.
    vault.set('CERT', 'é'.repeat(32 * 1024));
    expect(() => vault.set('CERT', 'é'.repeat(32 * 1024 + 1))).toThrow(/has 65538 bytes; a secret .* is at most 64 KiB/);
    expect(vault.get('CERT')).toBe('é'.repeat(32 * 1024));
  });

  it('cannot be opened with another key, or without one, and says what to do without showing a value', () => {
    const dir = tempDir();
    SecretVault.open(dir).set('KEYED', VALUE);
    writeFileSync(join(dir, SECRETS_DIR, 'vault.key'), Buffer.alloc(32, 7));
    const replaced = (() => {
      try {
        SecretVault.open(dir).get('KEYED');
      } catch (error) {
        return error as Error;
      }
    })();
    expect(replaced).toBeInstanceOf(SecretVaultError);
    expect(replaced!.message).toMatch(/cannot be opened .*set it again/);
    expect(replaced!.message).not.toContain(VALUE);
    writeFileSync(join(dir, SECRETS_DIR, 'vault.json'), '{ not json');
    expect(() => SecretVault.open(dir)).toThrow(/cannot be read .*restore it from a backup/);
  });
});
