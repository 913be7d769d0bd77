import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach } from 'vitest';
import type { SqliteEventStore } from '../../adapters/sqlite/sqliteEventStore.ts';

/**
 * A fresh temporary directory, removed after the current test: in the system's temporary folder,
 * or, `shared`, in /var/tmp, which a sandboxed plugin sees too, read-only (/tmp is one of the
 * folders its sandbox hides): for a file a test puts there for a plugin to read, a checkout of
 * plugins outside the data dir, or a home a test makes. What a plugin writes, it writes in its own
 * folder (support/pluginCopies.ts).
 */
export const useTempDir = ({ shared = false }: Readonly<{ shared?: boolean }> = {}): (() => string) => {
  const made: string[] = [];
  afterEach(() => {
    for (const dir of made.splice(0)) rmSync(dir, { recursive: true, force: true });
  });
  return () => {
    const dir = mkdtempSync(join(shared ? '/var/tmp' : tmpdir(), 'hologram-test-'));
    made.push(dir);
    return dir;
  };
};

/** Stores a test opens, closed after it (before its temporary directory goes). Push each one opened. */
export const useOpenStores = <S extends { close(): Promise<void> } = SqliteEventStore>(): S[] => {
  const stores: S[] = [];
  afterEach(async () => {
    for (const store of stores.splice(0)) await store.close();
  });
  return stores;
};
