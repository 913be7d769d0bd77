/**
 * One checked run of an in-process daemon: boot on a fresh data dir, let the test drive it,
 * drain, stop gracefully, then hold the log and the receivers to the run checks and
 * `homed replay --verify` (run in-process). Throws with every problem found, one per line.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { existingLogPath, openEventLog } from '../../cli/dataDir.ts';
import { replayCommand } from '../../cli/replayCommand.ts';
import { settle } from './daemonQuiescence.ts';
import { outcomeProblems, replyProblems } from './daemonRunChecks.ts';
import { drainDaemon } from './drainDaemon.ts';
import { InProcessDaemon, type InProcessDaemonOptions } from './inProcessDaemon.ts';

/** `homed replay --verify` on the data dir: the lines of what diverged, if anything did. */
const replayProblems = async (dataDir: string): Promise<string[]> => {
  const lines: string[] = [];
  const code = await replayCommand(['--data', dataDir, '--verify'], (line) => lines.push(line));
  return code === 0 ? [] : lines.filter((line) => line.includes('DIVERGED') || line.startsWith('verify:'));
};

const problemsOfRun = async (daemon: InProcessDaemon): Promise<string[]> => {
  const store = openEventLog(existingLogPath(daemon.dataDir));
  const events = await store.readAll().finally(() => store.close());
  return [...(await replayProblems(daemon.dataDir)), ...outcomeProblems(events, daemon.replies), ...replyProblems(events, daemon.replies)];
};

export const checkedDaemonRun = async (
  options: Omit<InProcessDaemonOptions, 'root'>,
  drive: (daemon: InProcessDaemon) => Promise<void>,
): Promise<void> => {
  const root = mkdtempSync(join(tmpdir(), 'hologram-model-'));
  const daemon = new InProcessDaemon({ ...options, root });
  try {
    await daemon.boot();
    await settle(daemon);
    await drive(daemon);
    await drainDaemon(daemon);
    await daemon.stop();
    const problems = await problemsOfRun(daemon);
    if (problems.length > 0) throw new Error(`${problems.join('\n')}\n(the daemon's life: ${daemon.history.join(' → ')})`);
  } finally {
    await daemon.dispose();
    rmSync(root, { recursive: true, force: true });
  }
};

/** Acts, then waits until the daemon is quiet again. */
export const step = async (daemon: InProcessDaemon, act: () => unknown): Promise<void> => {
  await act();
  await settle(daemon);
};
