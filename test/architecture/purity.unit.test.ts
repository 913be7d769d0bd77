/**
 * The deterministic core (events/, machines/, projections/) reads no clock, no randomness,
 * does no I/O, and depends only inward — the way Temporal's bundler refuses
 * non-deterministic imports in workflow code.
 */
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { checkPureSource, readSource, sourceFiles } from './sourceRules.ts';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

const CORE: Record<string, readonly string[]> = {
  events: [
    '../machines',
    '../projections',
    '../actors',
    '../plugins',
    '../adapters',
    '../../machines',
    '../../projections',
    '../../actors',
    '../../plugins',
    '../../adapters',
  ],
  machines: ['/actors/', '/plugins/', '/adapters/', '/projections/'],
  projections: ['/actors/', '/plugins/', '/adapters/', '/machines/'],
};

describe('the deterministic core', () => {
  for (const [folder, forbidden] of Object.entries(CORE)) {
    it(`${folder}/ reads no clock or randomness, does no I/O and imports only inward`, () => {
      const files = sourceFiles(ROOT, folder);
      expect(files.length).toBeGreaterThan(0);
      const findings = files.flatMap((file) => checkPureSource(readSource(ROOT, file), forbidden).map((f) => `${file}: ${f}`));
      expect(findings).toEqual([]);
    });
  }

  it('the rule itself catches each kind of violation', () => {
    const forbidden = ['/actors/'];
    expect(checkPureSource('const t = Date.now();', forbidden)).toEqual(['reads the wall clock (Date.now)']);
    expect(checkPureSource('const r = Math.random() * 2;', forbidden)).toEqual(['uses randomness (Math.random)']);
    expect(checkPureSource('const d = new Date();', forbidden)).toHaveLength(1);
    expect(checkPureSource("import { readFileSync } from 'node:fs';", forbidden)).toEqual(["imports the I/O module 'node:fs'"]);
    expect(checkPureSource("import Database from 'better-sqlite3';", forbidden)).toHaveLength(1);
    expect(checkPureSource("import { x } from '../../actors/kernel/index.ts';", forbidden)).toHaveLength(1);
    expect(checkPureSource("const m = await import('child_process');", forbidden)).toHaveLength(1);
    expect(checkPureSource('// Date.now() is mentioned in a comment only\nconst at = event.at;', forbidden)).toEqual([]);
    expect(checkPureSource('const d = new Date(event.at);', forbidden)).toEqual([]);
  });
});
