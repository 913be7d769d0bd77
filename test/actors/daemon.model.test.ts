/**
 * Model-based test of the whole daemon: the modules of cli/daemonModules.ts run in this
 * process on a real SQLite log (test/support/inProcessDaemon.ts: the `llm` module swapped for
 * a gated provider the test answers, a built-in probe plugin added, virtual time and ids),
 * with the fragile fixture as a real subprocess plugin (bundled once, see bundledPlugin.ts).
 * fast-check interleaves: messages over the cli socket (as waiter sends them) and clients
 * hanging up, stop (as `waiter --stop`), L3 interrupts from a plugin, model calls answered with
 * streamed text, tool calls (held by the probe, answered by the subprocess, the subprocess
 * dying mid-call so its supervisor restarts it, a tool that does not exist) or a failure,
 * time passing, graceful restarts on the same data dir, and crashes. After every command the
 * test waits until the daemon is quiet (daemonQuiescence.ts), and each run ends by draining
 * (every model and tool call answered until nothing runs or waits) and a graceful stop.
 *
 * A crash is what SIGKILL leaves on disk: the log as committed at that instant, copied with
 * `VACUUM INTO` (synchronous: nothing commits in between), while in the same tick every client
 * loses the daemon and every held call is forgotten; the dead kernel is then stopped (what it
 * writes after the copy is lost with its log), the copy replaces the data dir's log, and a new
 * kernel boots on it. "Crash N events into Answer(...)" copies once a subscriber sees N more
 * events committed after the answer (possibly a few more), so it lands inside the cascade.
 *
 * Then, per run:
 * 1. `homed replay --verify` (run in-process) finds every projection and every journal —
 *    each kernel boot, the scheduler, each plugin supervisor, the memory, every turn — equal
 *    to the log.
 * 2. Every input the scheduler queued ended with exactly one outcome (TaskCompleted or
 *    InputShortCircuited), and every input a client was told was accepted was queued.
 * 3. Every receiver (cli session, probe channel target) that stayed to the end of its reply got
 *    exactly what the log says it was sent, by the turns' facts and by the output actor's fold;
 *    one that left early got a beginning of it; nobody got anything after their end.
 *
 * Runs: 24 of up to 16 commands by default; HOLOGRAM_MODEL_RUNS=n and HOLOGRAM_MODEL_COMMANDS=n
 * for deeper ones. A failure prints the seed, the path and
 * the shrunk commands followed by a `/*replayPath="..."*\/` comment; replay one with
 * FC_SEED=<seed> FC_PATH=<path> FC_REPLAY_PATH=<replayPath> npx vitest run
 * test/actors/daemon.model.test.ts (HOLOGRAM_MODEL_LOG=1 prints the daemon's log lines).
 */
import fc from 'fast-check';
import { beforeAll, describe, it } from 'vitest';
import { bundleFixturePlugins } from '../support/bundledPlugin.ts';
import { daemonCommand, emptyDaemonModel } from '../support/daemonCommands.ts';
import { checkedDaemonRun, step } from '../support/daemonRun.ts';
import type { InProcessDaemon } from '../support/inProcessDaemon.ts';
import { useTempDir } from '../support/tempDir.ts';

const RUNS = Number(process.env.HOLOGRAM_MODEL_RUNS ?? 24);
const COMMANDS = Number(process.env.HOLOGRAM_MODEL_COMMANDS ?? 16);
const replay = {
  ...(process.env.FC_SEED ? { seed: Number(process.env.FC_SEED) } : {}),
  ...(process.env.FC_PATH ? { path: process.env.FC_PATH } : {}),
};
const replayPath = process.env.FC_REPLAY_PATH ? { replayPath: process.env.FC_REPLAY_PATH } : {};
const log = process.env.HOLOGRAM_MODEL_LOG ? (line: string) => process.stderr.write(`  homed: ${line}\n`) : undefined;

const tempDir = useTempDir();
let plugins: Record<string, string> = {};

beforeAll(async () => {
  plugins = await bundleFixturePlugins(tempDir(), ['fragile']);
});

const run = (drive: (daemon: InProcessDaemon) => Promise<void>) => checkedDaemonRun({ plugins, ...(log ? { log } : {}) }, drive);

describe('the daemon, driven by users, plugins, the model, restarts and crashes', () => {
  it(
    'replays every journal, ends every input once, and sends each receiver what the log says',
    async () => {
      await fc.assert(
        fc.asyncProperty(fc.commands([daemonCommand], { maxCommands: COMMANDS, size: 'large', ...replayPath }), (commands) =>
          run((daemon) => fc.asyncModelRun(() => ({ model: emptyDaemonModel(), real: daemon }), commands)),
        ),
        { numRuns: RUNS, ...replay },
      );
    },
    60_000 + RUNS * COMMANDS * 400,
  );

  // Found by the property: the task was resumed and preempted again in one decision, before its turn existed.
  it('runs a preempted task once when it is resumed and preempted again at once', async () => {
    await run(async (daemon) => {
      await step(daemon, () => daemon.ask('hi'));
      await step(daemon, () => daemon.interrupt('first'));
      await step(daemon, () => daemon.time.advance(2_100)); // past the preemption cooldown
      await step(daemon, () => daemon.interrupt('second'));
    });
  });
});
