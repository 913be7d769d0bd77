/** Static rules for the deterministic core, as a function over source text so it can be tested itself. */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';

const NONDETERMINISM: readonly [RegExp, string][] = [
  [/\bDate\.now\s*\(/, 'reads the wall clock (Date.now)'],
  [/\bnew Date\s*\(\s*\)/, 'reads the wall clock (new Date())'],
  [/\bperformance\.now\s*\(/, 'reads a clock (performance.now)'],
  [/\bMath\.random\s*\(/, 'uses randomness (Math.random)'],
  [/\bcrypto\.randomUUID\s*\(|\brandomUUID\s*\(/, 'uses randomness (randomUUID)'],
  [/\bprocess\.(env|hrtime|pid)\b/, 'reads the process environment'],
];

const IO_MODULES = [
  'fs',
  'fs/promises',
  'net',
  'http',
  'https',
  'http2',
  'child_process',
  'dgram',
  'dns',
  'tls',
  'worker_threads',
  'cluster',
  'os',
  'readline',
  'better-sqlite3',
  'kysely',
  'ws',
  'onnxruntime-node',
];

const importPattern =
  /(?:import|export)\s[^'"]*?from\s+['"]([^'"]+)['"]|import\(\s*['"]([^'"]+)['"]\s*\)|require\(\s*['"]([^'"]+)['"]\s*\)/g;

export const importsOf = (source: string): string[] => [...source.matchAll(importPattern)].map((m) => (m[1] ?? m[2] ?? m[3])!);

/** Findings for one file of the deterministic core. */
export const checkPureSource = (source: string, forbiddenPrefixes: readonly string[]): string[] => {
  const findings: string[] = [];
  const code = source.replace(/\/\*[\s\S]*?\*\//g, '').replace(/^\s*\/\/.*$/gm, '');
  for (const [pattern, why] of NONDETERMINISM) if (pattern.test(code)) findings.push(why);
  for (const specifier of importsOf(code)) {
    const bare = specifier.replace(/^node:/, '');
    if (IO_MODULES.includes(bare)) findings.push(`imports the I/O module '${specifier}'`);
    for (const prefix of forbiddenPrefixes) {
      if (specifier.includes(prefix)) findings.push(`imports '${specifier}' (the deterministic core may not depend on it)`);
    }
  }
  return findings;
};

export const sourceFiles = (root: string, dir: string): string[] => {
  const out: string[] = [];
  const walk = (path: string) => {
    for (const entry of readdirSync(path)) {
      const full = join(path, entry);
      if (statSync(full).isDirectory()) walk(full);
      else if (full.endsWith('.ts') && !full.endsWith('.test.ts')) out.push(relative(root, full));
    }
  };
  walk(join(root, dir));
  return out;
};

export const readSource = (root: string, file: string): string => readFileSync(join(root, file), 'utf8');
