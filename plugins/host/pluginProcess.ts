/**
 * One plugin child process: spawned in its own process group, stdio piped (frames on
 * stdin/stdout, stderr lines as its log), and watched by exactly one `exit` wait — never by
 * stdout EOF, which a grandchild holding stdout would delay forever. When the child ends, its
 * whole group is killed so nothing it forked outlives it; when the kernel process exits,
 * every group still alive is killed too.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { errnoCode, HologramError, type Timers } from '../../events/index.ts';
import { processInfo, type ProcessInfo } from './processTable.ts';
import { readStderrLines } from './stderrLines.ts';

export type ProcessExit = Readonly<{ exitCode: number | null; signal: string | null }>;

export class PluginSpawnFailed extends HologramError {
  readonly code = 'PLUGIN_SPAWN_FAILED';
  constructor(plugin: string, command: string, cause: unknown) {
    super(
      `plugin '${plugin}' could not be started ('${command}'): ${(cause as Error)?.message ?? String(cause)}; check the manifest's entry and that the file is executable`,
      { cause },
    );
  }
}

/** Errors of a spawn that say the machine is out of something (processes, memory, descriptors), not that the entry is wrong. */
const OUT_OF_ROOM = new Set(['EAGAIN', 'ENOMEM', 'EMFILE', 'ENFILE']);

/**
 * The machine refused the plugin a process for now: its user's processes or descriptors, or
 * memory, are used up (a red team's plugin started processes until its user's limit, and every
 * other plugin was then refused for good, told to check its manifest). Tried again, as a crash is.
 */
export class PluginSpawnOutOfRoom extends HologramError {
  readonly code = 'PLUGIN_SPAWN_OUT_OF_ROOM';
  constructor(plugin: string, cause: NodeJS.ErrnoException) {
    super(
      `plugin '${plugin}' could not be started now: the system refused a new process (${cause.code}: too many processes or open ` +
        `files for this user, or too little memory); it is tried again. See what else runs as this user ('homed plugins' lists the plugins)`,
      { cause },
    );
  }
}

/** Why a spawn failed, as the error its cause calls for. */
const spawnFailure = (plugin: string, command: string, error: unknown): HologramError =>
  OUT_OF_ROOM.has(errnoCode(error) ?? '')
    ? new PluginSpawnOutOfRoom(plugin, error as NodeJS.ErrnoException)
    : new PluginSpawnFailed(plugin, command, error);

export type PluginProcessOptions = Readonly<{
  plugin: string;
  command: string;
  args: readonly string[];
  cwd: string;
  /** The whole environment of the process (the daemon's own is never inherited). */
  env: Readonly<Record<string, string>>;
  /** Each line the plugin writes to stderr; `cutShort`, one cut at the bound (its rest dropped). */
  onStderr: (line: string, cutShort: boolean) => void;
  /** Arms the grace timer of `stop`. */
  timers: Timers;
}>;

const liveGroups = new Set<number>();
let exitHookInstalled = false;

/** Kills every plugin process group still alive; runs on the kernel's own exit. */
export const killAllPluginGroups = (signal: NodeJS.Signals = 'SIGKILL'): void => {
  for (const pgid of liveGroups) killGroup(pgid, signal);
};

const killGroup = (pgid: number, signal: NodeJS.Signals): void => {
  try {
    process.kill(-pgid, signal);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ESRCH') throw error;
  }
};

/** How often, and how long at most, `killedAll` looks for the processes it killed to be gone. */
const GONE_CHECK_MS = 10;
const GONE_AT_MOST_MS = 2_000;

/**
 * Kills each of `processes` still alive (the same pid started at the same tick: a pid used again
 * is another's) and resolves once none is, or after GONE_AT_MOST_MS: what a plugin holds (its
 * open and mapped files) is freed only when its last process is gone, one that left its group too.
 */
export const killedAll = async (processes: readonly ProcessInfo[], timers: Timers): Promise<void> => {
  const alive = (): ProcessInfo[] => processes.filter((p) => processInfo(p.pid)?.startTicks === p.startTicks);
  for (const { pid } of alive()) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ESRCH') throw error;
    }
  }
  for (let waited = 0; waited < GONE_AT_MOST_MS && alive().length > 0; waited += GONE_CHECK_MS) {
    await new Promise<void>((resolve) => timers.setTimer(resolve, GONE_CHECK_MS));
  }
};

export class PluginProcess {
  readonly child: ChildProcess;
  /** Resolves once, when the child process has exited (its group is killed right after). */
  readonly exited: Promise<ProcessExit>;
  private ended = false;
  private readonly timers: Timers;

  private constructor(child: ChildProcess, options: PluginProcessOptions) {
    this.child = child;
    this.timers = options.timers;
    const pgid = child.pid!;
    liveGroups.add(pgid);
    this.exited = new Promise<ProcessExit>((resolve) => {
      child.once('exit', (exitCode, signal) => {
        this.ended = true;
        killGroup(pgid, 'SIGKILL');
        liveGroups.delete(pgid);
        resolve({ exitCode, signal });
      });
    });
    readStderrLines(child.stderr!, options.onStderr);
    // The kernel must not die of a plugin that closed its stdin early.
    child.stdin!.on('error', () => undefined);
  }

  /**
   * Spawns the plugin. Resolves once the OS has started it.
   * @throws PluginSpawnFailed when the command cannot be run (missing, not executable); PluginSpawnOutOfRoom when the machine refuses a process for now.
   */
  static spawn(options: PluginProcessOptions): Promise<PluginProcess> {
    if (!exitHookInstalled) {
      exitHookInstalled = true;
      process.on('exit', () => killAllPluginGroups('SIGKILL'));
    }
    return new Promise((resolve, reject) => {
      let child: ChildProcess;
      try {
        child = spawn(options.command, options.args, {
          cwd: options.cwd,
          env: { ...options.env },
          stdio: ['pipe', 'pipe', 'pipe'],
          detached: true,
        });
      } catch (error) {
        reject(spawnFailure(options.plugin, options.command, error));
        return;
      }
      child.once('error', (error) => reject(spawnFailure(options.plugin, options.command, error)));
      child.once('spawn', () => resolve(new PluginProcess(child, options)));
    });
  }

  get pid(): number {
    return this.child.pid!;
  }

  get running(): boolean {
    return !this.ended;
  }

  /** Closes stdin (the polite request to leave), then kills the group if it is still there after `graceMs`. */
  async stop(graceMs = 2_000): Promise<ProcessExit> {
    if (this.ended) return this.exited;
    this.child.stdin?.end();
    const timer = this.timers.setTimer(() => killGroup(this.pid, 'SIGKILL'), graceMs);
    const exit = await this.exited;
    this.timers.clearTimer(timer);
    return exit;
  }

  kill(signal: NodeJS.Signals = 'SIGKILL'): void {
    if (!this.ended) killGroup(this.pid, signal);
  }
}
