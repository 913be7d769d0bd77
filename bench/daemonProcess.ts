/**
 * homed as a child process, started the way a user starts it (`node bin/homed.js run --data
 * DIR`, from the repo root) and stopped the way Ctrl-C stops it. A bench that exits before
 * stopping it (an error, a signal) kills it on the way out instead of leaving it running.
 */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const REPO = fileURLToPath(new URL('../', import.meta.url));
const HOMED = fileURLToPath(new URL('../bin/homed.js', import.meta.url));
const READY = /homed: ready/;
const READY_TIMEOUT_MS = 120_000;
const STOP_TIMEOUT_MS = 30_000;
/** Enough of the daemon's output to explain a failure. */
const KEPT_OUTPUT = 4_000;

export type Daemon = Readonly<{
  pid: number;
  /** The last of what it printed (stdout and stderr). */
  output(): string;
  /**
   * SIGINT, then waits for the exit (SIGKILL after STOP_TIMEOUT_MS). Never throws, so a caller's
   * own error is not hidden; resolves with what went wrong when the exit was not clean.
   */
  stop(): Promise<Error | undefined>;
}>;

type Exit = Readonly<{ code: number | null; signal: NodeJS.Signals | null }>;

/** Starts homed on `dataDir` and resolves once it prints `homed: ready`. `nodeArgs` go before the script (e.g. --cpu-prof). */
export const startDaemon = async (dataDir: string, nodeArgs: readonly string[] = []): Promise<Daemon> => {
  const child = spawn(process.execPath, [...nodeArgs, HOMED, 'run', '--data', dataDir], { cwd: REPO, stdio: ['ignore', 'pipe', 'pipe'] });
  // process.exit() (run.ts on SIGINT) runs no async cleanup; SIGKILL is what can still be sent then.
  const killOnExit = (): void => void child.kill('SIGKILL');
  process.on('exit', killOnExit);
  let output = '';
  const keep = (chunk: Buffer): void => {
    output = (output + chunk.toString()).slice(-KEPT_OUTPUT);
  };
  child.stdout.on('data', keep);
  child.stderr.on('data', keep);
  const exited = new Promise<Exit>((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
  exited.then(() => process.off('exit', killOnExit));
  const failure = (what: string): Error => new Error(`homed (pid ${child.pid}) ${what}; its last output:\n${output}`);

  const ready = new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(failure(`did not print 'homed: ready' within ${READY_TIMEOUT_MS} ms`)), READY_TIMEOUT_MS);
    const onData = (): void => {
      if (!READY.test(output)) return;
      clearTimeout(timer);
      child.stdout.off('data', onData);
      resolve();
    };
    child.stdout.on('data', onData);
    child.once('error', (error) => reject(failure(`could not start: ${error.message}`)));
    exited.then((exit) => {
      clearTimeout(timer);
      reject(failure(`exited (code ${exit.code}, signal ${exit.signal}) before it was ready`));
    });
  });
  try {
    await ready;
  } catch (error) {
    child.kill('SIGKILL');
    await exited;
    throw error;
  }

  return {
    pid: child.pid!,
    output: () => output,
    stop: async () => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGINT');
      let timer: NodeJS.Timeout | undefined;
      const late = new Promise<'late'>((resolve) => {
        timer = setTimeout(() => resolve('late'), STOP_TIMEOUT_MS);
      });
      const exit = await Promise.race([exited, late]).finally(() => clearTimeout(timer));
      if (exit === 'late') {
        child.kill('SIGKILL');
        await exited;
        return failure(`did not stop within ${STOP_TIMEOUT_MS} ms of SIGINT; killed`);
      }
      return exit.code === 0 ? undefined : failure(`stopped with code ${exit.code}, signal ${exit.signal}`);
    },
  };
};
