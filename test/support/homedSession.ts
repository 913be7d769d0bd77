/**
 * homed as e2e tests meet it, the way a user does: a data dir with settings and plugins, the
 * running daemon (killed after the test if the test did not stop it), its cli socket, its log
 * and `homed replay --verify`.
 */
import type { ChildProcess } from 'node:child_process';
import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { createConnection } from 'node:net';
import { userInfo } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { afterEach, expect } from 'vitest';
import type { LlmServer } from './llmServer/index.ts';
import { finished, HOMED, REPO, runHomed, spawnNode, spawnNodeUnderUmask, waitForLine, type Finished } from './processes.ts';

export type LogLine = { seq: number; type: string; stream: string; data: Record<string, unknown> };

/** `homed log` output, one JSON event per line. */
export const parseLog = (stdout: string): LogLine[] =>
  stdout
    .trim()
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as LogLine);

/** The data dir's log as `homed log ARGS` prints it. */
export const logOf = async (dir: string, ...args: string[]): Promise<LogLine[]> =>
  parseLog((await runHomed(['log', '--data', dir, ...args])).stdout);

/** `homed replay --verify` passes on the data dir; its report. */
export const verifyReplay = async (dir: string): Promise<string> => {
  const result = await runHomed(['replay', '--data', dir, '--verify']);
  expect(result.stdout).not.toContain('DIVERGED');
  expect(result.code, result.stderr).toBe(0);
  return result.stdout;
};

export type TestDataDir = Readonly<{
  /** The one LLM source, an openai-wire source on this server (unless `sources` is given). */
  llm?: LlmServer;
  sources?: readonly Record<string, unknown>[];
  /** Fixture plugins of test/fixtures/plugins/host to install. */
  plugins?: readonly string[];
  /** More top-level settings. */
  settings?: Readonly<Record<string, unknown>>;
}>;

/** A fresh data dir under `root` with the given settings.json and plugins. */
export const testDataDir = (root: string, { llm, sources, plugins = [], settings = {} }: TestDataDir = {}): string => {
  const dir = join(root, 'data');
  mkdirSync(join(dir, 'plugins'), { recursive: true });
  for (const plugin of plugins) symlinkSync(join(REPO, 'test/fixtures/plugins/host', plugin), join(dir, 'plugins', plugin));
  const llmSources = sources ?? (llm ? [{ name: 'local', adapter: 'openai', baseUrl: llm.baseUrl('openai'), model: 'm' }] : undefined);
  const llmSettings = { ...(llmSources ? { sources: llmSources } : {}), ...(settings.llm as object | undefined) };
  writeFileSync(
    join(dir, 'settings.json'),
    JSON.stringify({
      ...settings,
      // Daemons of tests run side by side: each web UI takes a free port (its URL is in the daemon's output).
      plugins: {
        ...(settings.plugins as object | undefined),
        webui: { port: 0, ...(settings.plugins as { webui?: object } | undefined)?.webui },
      },
      ...(Object.keys(llmSettings).length ? { llm: llmSettings } : {}),
    }),
  );
  return dir;
};

export type CliReply = { type: string; text?: string; outcome?: string; kind?: string; error?: string; inputId?: string; name?: string };

/** Speaks the cli wire directly: every reply line of one message, until its end (or the socket closes). */
export const askSocket = (dir: string, text: string, onReply?: (reply: CliReply) => void): Promise<CliReply[]> =>
  new Promise((resolve, reject) => {
    const socket = createConnection(join(dir, 'homed.sock'));
    const replies: CliReply[] = [];
    const lines = createInterface({ input: socket });
    lines.on('error', reject);
    lines.on('line', (line) => {
      let reply: CliReply;
      try {
        reply = JSON.parse(line) as CliReply;
      } catch {
        reject(new Error(`homed sent a reply that is not JSON (cut by a kill?): ${line.slice(0, 200)}`));
        return;
      }
      replies.push(reply);
      onReply?.(reply);
      if (reply.type === 'end' || reply.type === 'error') {
        socket.end();
        resolve(replies);
      }
    });
    socket.on('error', reject);
    socket.on('close', () => resolve(replies));
    socket.write(`${JSON.stringify({ type: 'message', text, from: userInfo().username })}\n`);
  });

export type StartOptions = Readonly<{ args?: readonly string[]; umask?: number; env?: Readonly<Record<string, string>> }>;

export type RunningDaemon = Readonly<{
  process: ChildProcess;
  /** Its stdout up to "homed: ready". */
  output: string;
  /** Its exit, with everything it printed. */
  exited: Promise<Finished>;
}>;

/**
 * Daemons and other things a test starts, undone after it in reverse order: a daemon the test
 * left running is killed with SIGKILL (a test that stops one cleanly says so with `stop`).
 */
export const useDaemons = () => {
  const cleanups: (() => Promise<unknown> | undefined)[] = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });
  return {
    /** Runs something after the test (a server's close). */
    onCleanup(cleanup: () => Promise<unknown> | undefined): void {
      cleanups.push(cleanup);
    },
    /**
     * `homed run --data DIR [ARGS]`, once it says it is ready; `output` is its stdout up to then.
     * With `umask`, it starts under that umask (through sh, which execs node: the pid is homed's);
     * `env` is added to its environment.
     */
    async start(dir: string, { umask, args = [], env = {} }: StartOptions = {}): Promise<RunningDaemon> {
      const argv = [HOMED, 'run', '--data', dir, ...args];
      const spawnOptions = { env: { ...process.env, ...env } };
      const daemon = umask === undefined ? spawnNode(argv, spawnOptions) : spawnNodeUnderUmask(umask, argv, spawnOptions);
      const exited = finished(daemon);
      cleanups.push(async () => {
        if (daemon.exitCode === null && daemon.signalCode === null) daemon.kill('SIGKILL');
        await exited.catch(() => undefined);
      });
      const output = await waitForLine(daemon, /homed: ready/);
      return { process: daemon, output, exited };
    },
    /** Stops the daemon as Ctrl-C does and expects a clean exit. */
    async stop(daemon: RunningDaemon): Promise<void> {
      daemon.process.kill('SIGINT');
      const result = await daemon.exited;
      expect(result.code, result.stderr).toBe(0);
    },
  };
};
