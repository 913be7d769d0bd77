/** Running homed and fixture scripts as real processes, the way a user or a crash would. */
import { spawn, type ChildProcess, type SpawnOptions } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { PLUGIN_INSTANCE_ENV } from '../../plugins/host/pluginEnv.ts';
import { environOf, listProcesses } from '../../plugins/host/processTable.ts';

export const REPO = fileURLToPath(new URL('../../', import.meta.url));
export const HOMED = `${REPO}bin/homed.js`;
export const WAITER = `${REPO}bin/waiter.js`;

export type Finished = { code: number | null; signal: NodeJS.Signals | null; stdout: string; stderr: string };

export const finished = (child: ChildProcess): Promise<Finished> =>
  new Promise((resolve, reject) => {
    let stdout = '';
    let stderr = '';
    child.stdout?.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('error', reject);
    child.on('close', (code, signal) => resolve({ code, signal, stdout, stderr }));
  });

const running = new Set<ChildProcess>();
// A test that fails before its own cleanup must not leave a daemon running after the worker is gone.
process.once('exit', () => {
  for (const child of running) child.kill('SIGKILL');
});

const tracked = (child: ChildProcess): ChildProcess => {
  running.add(child);
  child.once('exit', () => running.delete(child));
  return child;
};

export const spawnNode = (args: string[], options: SpawnOptions = {}): ChildProcess =>
  tracked(spawn(process.execPath, args, { cwd: REPO, stdio: ['ignore', 'pipe', 'pipe'], ...options }));

/** `node ARGS` under `umask`: sh sets it, then execs node, so the child's pid is node's. */
export const spawnNodeUnderUmask = (umask: number, args: string[], options: SpawnOptions = {}): ChildProcess =>
  tracked(
    spawn('/bin/sh', ['-c', `umask ${umask.toString(8).padStart(3, '0')} && exec "$0" "$@"`, process.execPath, ...args], {
      cwd: REPO,
      stdio: ['ignore', 'pipe', 'pipe'],
      ...options,
    }),
  );

/**
 * `node ARGS` bound by permission bits, as any user is. Root passes them through
 * CAP_DAC_OVERRIDE, so as root it runs without that (and without CAP_FOWNER, which would let
 * it chmod its way in), dropped by setpriv (util-linux). It keeps CAP_DAC_READ_SEARCH, so it
 * still reads the checkout wherever that lives; running it as another user instead fails when
 * the checkout sits in a private directory (a home directory, `mktemp -d`).
 */
export const spawnNodeBoundByPermissions = (args: string[], options: SpawnOptions = {}): ChildProcess => {
  if (process.getuid?.() !== 0) return spawnNode(args, options);
  const drop = '-dac_override,-fowner';
  return tracked(
    spawn('setpriv', [`--inh-caps=${drop}`, `--bounding-set=${drop}`, process.execPath, ...args], {
      cwd: REPO,
      stdio: ['ignore', 'pipe', 'pipe'],
      ...options,
    }),
  );
};

/** Runs `node ARGS` to completion with `input` on its stdin, which is closed after it (a script piping into it). */
export const runNodeWithInput = (args: string[], input: string | Uint8Array): Promise<Finished> => {
  const child = spawnNode(args, { stdio: ['pipe', 'pipe', 'pipe'] });
  const done = finished(child);
  child.stdin?.end(input);
  return done;
};

/** Runs `homed ARGS` to completion. */
export const runHomed = (args: string[], options: SpawnOptions = {}): Promise<Finished> => finished(spawnNode([HOMED, ...args], options));

/** Resolves when a line of the child's stdout matches, with the output so far. */
export const waitForLine = (child: ChildProcess, pattern: RegExp, timeoutMs = 30_000): Promise<string> =>
  new Promise((resolve, reject) => {
    let seen = '';
    const timer = setTimeout(() => reject(new Error(`no line matching ${pattern} within ${timeoutMs} ms; saw:\n${seen}`)), timeoutMs);
    const onData = (chunk: Buffer) => {
      seen += chunk.toString();
      if (pattern.test(seen)) {
        clearTimeout(timer);
        child.stdout?.off('data', onData);
        resolve(seen);
      }
    };
    child.stdout?.on('data', onData);
    child.once('close', () => {
      clearTimeout(timer);
      reject(new Error(`process exited before a line matching ${pattern}; saw:\n${seen}`));
    });
  });

/** A message is a clear error: no JavaScript stack frames in it. */
export const hasNoStackTrace = (text: string): boolean => !/^\s+at .+:\d+:\d+\)?$/m.test(text);

/** 'gone' once the process no longer runs (a zombie nobody reaped yet counts as gone). */
export const processState = (pid: number): 'alive' | 'gone' => {
  try {
    return /^State:\s+Z/m.test(readFileSync(`/proc/${pid}/status`, 'utf8')) ? 'gone' : 'alive';
  } catch {
    return 'gone';
  }
};

const tryRead = (path: string): string | undefined => {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return undefined;
  }
};

/** The start a tag names (a PluginProcessSpawned's `instance`): a test that only waits for a tagged process to be gone checks this first. */
export const instanceOfTag = (tag: string): string => tag.slice(0, tag.lastIndexOf('/'));

/**
 * The machine's pid of the running process a plugin fixture tagged `INSTANCE/PID`
 * (test/fixtures/plugins/host/processTags.ts): the one whose innermost pid is PID and whose
 * environment holds the instance marker of that start; undefined once it no longer runs.
 */
export const findTagged = (tag: string): number | undefined => {
  const [instance, pid] = [instanceOfTag(tag), tag.slice(tag.lastIndexOf('/') + 1)];
  for (const { pid: hostPid } of listProcesses() ?? []) {
    const innermost = /^NSpid:\s+(.+)$/m
      .exec(tryRead(`/proc/${hostPid}/status`) ?? '')?.[1]
      ?.trim()
      .split(/\s+/)
      .at(-1);
    if (innermost === pid && environOf(hostPid)?.includes(`${PLUGIN_INSTANCE_ENV}=${instance}`)) return hostPid;
  }
  return undefined;
};

/** The machine's pid of a tagged process that must be running now. */
export const hostPidOfTag = (tag: string): number => {
  const pid = findTagged(tag);
  if (pid === undefined) throw new Error(`no running process is tagged ${tag}`);
  return pid;
};

/** 'gone' once no process tagged so runs. */
export const taggedProcessState = (tag: string): 'alive' | 'gone' => {
  const pid = findTagged(tag);
  return pid === undefined ? 'gone' : processState(pid);
};
