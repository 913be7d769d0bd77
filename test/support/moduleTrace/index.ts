/**
 * Which code a command ran: `node ARGS` with every ES module it resolves recorded (see
 * register.mjs), so a test can tell a bundle (waiter's, homed's) from the TypeScript sources run through tsx.
 */
import type { SpawnOptions } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { BUNDLES, type BundleName } from '../../../bin/bundles.js';
import { finished, type Finished, spawnNode } from '../processes.ts';

const REGISTER = fileURLToPath(new URL('./register.mjs', import.meta.url));

export type TracedRun = Finished & { modules: readonly string[] };

export type TracedOptions = SpawnOptions & {
  /** Written to its stdin, then closed. */
  input?: string;
  /** Its stdout closed before it writes (a reader gone, as `| head` leaves it). */
  closeStdout?: boolean;
};

/** Runs `node ARGS` and returns what it printed and the URL of every module it resolved. */
export const runTracingModules = async (args: readonly string[], options: TracedOptions = {}): Promise<TracedRun> => {
  const dir = mkdtempSync(join(tmpdir(), 'hologram-trace-'));
  const trace = join(dir, 'modules');
  try {
    const { input, closeStdout = false, env, ...spawnOptions } = options;
    const child = spawnNode(['--import', REGISTER, ...args], {
      ...spawnOptions,
      env: { ...(env ?? process.env), HOLOGRAM_TRACE_MODULES: trace },
      stdio: [input === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'],
    });
    if (closeStdout) child.stdout?.destroy();
    if (input !== undefined) child.stdin?.end(input);
    const result = await finished(child);
    let modules: string[] = [];
    try {
      modules = readFileSync(trace, 'utf8').split('\n').filter(Boolean);
    } catch {
      // nothing resolved (node failed before its entry point)
    }
    return { ...result, modules };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
};

/** What the modules say ran: the bundle `name` of `root` (no tsx, no .ts source), its sources through tsx, or neither. */
export const ranFrom = (name: BundleName, modules: readonly string[], root: string): 'bundle' | 'tsx' | 'unknown' => {
  const tsx = modules.some((url) => url.includes('/node_modules/tsx/'));
  const typescript = modules.some((url) => new URL(url).pathname.endsWith('.ts'));
  if (modules.includes(pathToFileURL(join(root, BUNDLES[name].file)).href) && !tsx && !typescript) return 'bundle';
  if (tsx && modules.includes(pathToFileURL(join(root, BUNDLES[name].entry)).href)) return 'tsx';
  return 'unknown';
};
