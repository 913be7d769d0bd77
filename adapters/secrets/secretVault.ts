/**
 * The credential vault of a data dir: named secrets encrypted at rest (AES-256-GCM) in
 * `DIR/secrets/vault.json`, with a key in `DIR/secrets/vault.key` made at first use. Both files
 * are 0600 in a 0700 folder and written whole (a temporary file renamed), so a crash never leaves
 * half a vault. Plaintext leaves only through `get`; names, never values, are listed.
 */
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { closestNames } from '../../events/closestNames.ts';
import { HologramError } from '../../events/errors.ts';
import { writePrivateFile } from '../files/privateFiles.ts';

/** Values shorter than this are refused: scrubbed from text they would match ordinary words, and unscrubbed they would reach the model. */
export const SHORTEST_SECRET = 4;
/** A key, a token, a password or a certificate fits in this; a longer value is a mistake (a file piped in by accident). */
export const LONGEST_SECRET_BYTES = 64 * 1024;

export const SECRETS_DIR = 'secrets';
const KEY_FILE = 'vault.key';
export const VAULT_FILE = 'vault.json';
const KEY_BYTES = 32;
const IV_BYTES = 12;
const VAULT_VERSION = 1;

/** A secret's name: what `@{NAME}` and `apiKeySecret` refer to. */
export const SECRET_NAME = /^[A-Z][A-Z0-9_]{0,63}$/;

/** A name that is not one, a secret that is not there, a vault that cannot be read. */
export class SecretVaultError extends HologramError {
  readonly code = 'SECRET_VAULT';
}

/**
 * `tools`: the tools (names or globs) its alias may be filled into; none when absent. `setFrom`:
 * 'page' when the web UI set it (whoever set it there knows its value). Neither is secret, kept in clear.
 */
type Sealed = { iv: string; tag: string; data: string; tools?: string[]; setFrom?: 'page' };
/** A value the vault held under `name` before it was replaced or removed: no longer filled in, still scrubbed. */
type Retired = { name: string; iv: string; tag: string; data: string };
type VaultFile = { version: number; secrets: Record<string, Sealed>; retired?: Retired[] };

/** How many replaced or removed values the vault keeps for scrubbing, newest last. */
export const RETIRED_KEPT = 64;

export const checkSecretName = (name: string): void => {
  if (!SECRET_NAME.test(name)) {
    throw new SecretVaultError(
      `${JSON.stringify(name)} is not a secret name: use 1–64 capital letters, digits and '_', starting with a letter (e.g. OPENAI_KEY)`,
    );
  }
};

export class SecretVault {
  private constructor(
    private readonly dir: string,
    private file: VaultFile,
  ) {}

  /** The vault of `dataDir` (empty when none was written yet). */
  static open(dataDir: string): SecretVault {
    const dir = join(dataDir, SECRETS_DIR);
    const path = join(dir, VAULT_FILE);
    if (!existsSync(path)) return new SecretVault(dir, { version: VAULT_VERSION, secrets: {} });
    let file: VaultFile;
    try {
      file = JSON.parse(readFileSync(path, 'utf8')) as VaultFile;
    } catch (error) {
      throw new SecretVaultError(
        `the vault ${path} cannot be read (${(error as Error).message}); restore it from a backup, or remove it and set the secrets again`,
      );
    }
    if (file?.version !== VAULT_VERSION || typeof file.secrets !== 'object' || file.secrets === null) {
      throw new SecretVaultError(
        `the vault ${path} is not one this build reads (version ${JSON.stringify(file?.version)}, expected ${VAULT_VERSION})`,
      );
    }
    return new SecretVault(dir, file);
  }

  /** The names of the secrets, sorted. */
  names(): string[] {
    return Object.keys(this.file.secrets).sort();
  }

  has(name: string): boolean {
    return Object.hasOwn(this.file.secrets, name);
  }

  /** The plaintext of `name`. @throws SecretVaultError when there is none, or the key does not open it. */
  get(name: string): string {
    const sealed = this.has(name) ? this.file.secrets[name] : undefined;
    if (!sealed) {
      const near = closestNames(name, this.names());
      const meant = near.length ? ` (did you mean ${near.join(' or ')}?)` : '';
      throw new SecretVaultError(`no secret ${name} in the vault${meant}; set it with 'homed secret set ${name}'`);
    }
    try {
      return this.open(sealed);
    } catch (error) {
      if (error instanceof SecretVaultError) throw error;
      throw new SecretVaultError(
        `secret ${name} cannot be opened with ${join(this.dir, KEY_FILE)} (the key file was replaced, or the vault was changed): set it again`,
      );
    }
  }

  /** The tools `name`'s alias may be filled into (names or globs); empty when none. */
  toolsOf(name: string): readonly string[] {
    return (this.has(name) ? this.file.secrets[name]?.tools : undefined) ?? [];
  }

  /** Whether the web UI set `name`'s value as it is now (its setter knows it), not `homed secret set` or `homed init`. */
  setFromPage(name: string): boolean {
    return this.has(name) && this.file.secrets[name]?.setFrom === 'page';
  }

  /**
   * Stores `value` under `name`, replacing what was there; `tools`: where its alias may be filled in;
   * `fromPage`: the web UI sets it (see setFromPage).
   */
  set(name: string, value: string, tools: readonly string[] = [], { fromPage = false }: Readonly<{ fromPage?: boolean }> = {}): void {
    checkSecretName(name);
    if (value === '') throw new SecretVaultError(`the value for ${name} is empty; give it on stdin`);
    if (value.length < SHORTEST_SECRET) {
      throw new SecretVaultError(
        `the value for ${name} has ${value.length} character(s); a secret needs at least ${SHORTEST_SECRET}: a shorter one ` +
          'cannot be told apart from ordinary text, so it could not be kept out of what the model sees',
      );
    }
    if (Buffer.byteLength(value) > LONGEST_SECRET_BYTES) {
      throw new SecretVaultError(
        `the value for ${name} has ${Buffer.byteLength(value)} bytes; a secret (a key, a token, a password) is at most ${LONGEST_SECRET_BYTES / 1024} KiB`,
      );
    }
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv('aes-256-gcm', this.key(true), iv);
    const data = Buffer.concat([cipher.update(value, 'utf8'), cipher.final()]);
    const before = this.has(name) ? this.file.secrets[name]! : undefined;
    this.file = {
      ...this.file,
      ...(before && this.heldBefore(before, value) ? { retired: this.retiring(name, before) } : {}),
      secrets: {
        ...this.file.secrets,
        [name]: {
          iv: iv.toString('base64'),
          tag: cipher.getAuthTag().toString('base64'),
          data: data.toString('base64'),
          ...(tools.length ? { tools: [...tools] } : {}),
          ...(fromPage ? { setFrom: 'page' as const } : {}),
        },
      },
    };
    this.save();
  }

  /** Removes `name`; its value stays among the retired ones. @returns whether it was there. */
  remove(name: string): boolean {
    if (!this.has(name)) return false;
    const { [name]: removed, ...rest } = this.file.secrets;
    this.file = { ...this.file, secrets: rest, retired: this.retiring(name, removed!) };
    this.save();
    return true;
  }

  /**
   * The values the vault held before they were replaced or removed, newest last, with the names
   * they were under (those the key no longer opens left out): what a tool or a handler that kept
   * one could hand back, to scrub as that name.
   */
  retired(): readonly (readonly [name: string, value: string])[] {
    const opened: [string, string][] = [];
    for (const entry of this.file.retired ?? []) {
      try {
        opened.push([entry.name, this.open(entry)]);
      } catch {
        // sealed under another key: nothing to scrub for
      }
    }
    return opened;
  }

  /** Whether `sealed` holds a value other than `value` (one the key no longer opens is nothing to keep). */
  private heldBefore(sealed: Sealed, value: string): boolean {
    try {
      return this.open(sealed) !== value;
    } catch {
      return false;
    }
  }

  /** The retired list with `sealed`, the value `name` held until now, added last. */
  private retiring(name: string, sealed: Sealed): Retired[] {
    const { iv, tag, data } = sealed;
    return [...(this.file.retired ?? []), { name, iv, tag, data }].slice(-RETIRED_KEPT);
  }

  private open(sealed: Readonly<{ iv: string; tag: string; data: string }>): string {
    const decipher = createDecipheriv('aes-256-gcm', this.key(false), Buffer.from(sealed.iv, 'base64'));
    decipher.setAuthTag(Buffer.from(sealed.tag, 'base64'));
    return Buffer.concat([decipher.update(Buffer.from(sealed.data, 'base64')), decipher.final()]).toString('utf8');
  }

  private key(create: boolean): Buffer {
    const path = join(this.dir, KEY_FILE);
    if (existsSync(path)) {
      const key = readFileSync(path);
      if (key.length !== KEY_BYTES) throw new SecretVaultError(`${path} is not a vault key (${key.length} bytes, expected ${KEY_BYTES})`);
      return key;
    }
    if (!create) throw new SecretVaultError(`the vault key ${path} is missing: the secrets cannot be opened without it; set them again`);
    mkdirSync(this.dir, { recursive: true, mode: 0o700 });
    chmodSync(this.dir, 0o700);
    const key = randomBytes(KEY_BYTES);
    writePrivateFile(path, key);
    return key;
  }

  private save(): void {
    mkdirSync(this.dir, { recursive: true, mode: 0o700 });
    writePrivateFile(join(this.dir, VAULT_FILE), `${JSON.stringify(this.file, null, 2)}\n`);
  }
}
