/** Static rules over source text (the deterministic core, raw timers, layers), as functions so each can be tested itself. */
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
  /(?:import|export)\s[^'"]*?from\s+['"]([^'"]+)['"]|import\(\s*['"]([^'"]+)['"]\s*\)|require\(\s*['"]([^'"]+)['"]\s*\)|\bimport\s+['"]([^'"]+)['"]/g;

/** Every module a source names: static and dynamic imports, re-exports, side-effect imports, require. */
export const importsOf = (source: string): string[] => [...source.matchAll(importPattern)].map((m) => (m[1] ?? m[2] ?? m[3] ?? m[4])!);

/** The source without block comments and whole-line `//` comments (lines kept, so findings can name them): what the rules read. */
export const codeOf = (source: string): string =>
  source.replace(/\/\*[\s\S]*?\*\//g, (comment) => comment.replace(/[^\n]/g, '')).replace(/^\s*\/\/.*$/gm, '');

/** Findings for one file of the deterministic core. */
export const checkPureSource = (source: string, forbiddenPrefixes: readonly string[]): string[] => {
  const findings: string[] = [];
  const code = codeOf(source);
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

// A timer or an id the running system makes itself is one the tests and replay cannot control.
const RAW_TIMERS_AND_IDS: readonly [RegExp, string][] = [
  ...(['setTimeout', 'setInterval', 'setImmediate'] as const).map((name): [RegExp, string] => [
    // A call or a reference, not a property of that name (`{ setTimeout: ... }`) or a method on an injected clock.
    new RegExp(`(?:(?<![\\w$.])|\\bglobal(?:This)?\\.)${name}\\b(?!\\s*\\??:)`),
    `arms a raw timer (${name}); take Facility.timers (or actors/clock) instead`,
  ]),
  [/\brandomUUID\b/, 'makes a raw id (randomUUID); take Facility.ids (or actors/clock) instead'],
];

const TIMER_MODULES = ['timers', 'timers/promises'];

/** Findings for one file that must take its timers and ids as facilities, each with its line. */
export const checkNoRawTimers = (source: string): string[] => {
  const code = codeOf(source);
  const findings = code
    .split('\n')
    .flatMap((line, at) => RAW_TIMERS_AND_IDS.filter(([pattern]) => pattern.test(line)).map(([, why]) => `line ${at + 1}: ${why}`));
  for (const specifier of importsOf(code)) {
    if (TIMER_MODULES.includes(specifier.replace(/^node:/, ''))) findings.push(`imports the timer module '${specifier}'`);
  }
  return findings;
};

/** The .ts files under `dir` (relative to `root`), without tests unless asked. */
export const sourceFiles = (root: string, dir: string, options: Readonly<{ withTests?: boolean }> = {}): string[] => {
  const out: string[] = [];
  const walk = (path: string) => {
    for (const entry of readdirSync(path)) {
      const full = join(path, entry);
      if (statSync(full).isDirectory()) walk(full);
      else if (full.endsWith('.ts') && (options.withTests || !full.endsWith('.test.ts'))) out.push(relative(root, full));
    }
  };
  walk(join(root, dir));
  return out;
};

export const readSource = (root: string, file: string): string => readFileSync(join(root, file), 'utf8');
