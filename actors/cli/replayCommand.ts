/**
 * `homed replay`: rebuilds every projection from the log into a fresh database.
 * `--until SEQ` prints every projection's state at SEQ; `--verify` compares with the live
 * read models and names the first diverging projection and sequence.
 */
import { SCHEDULER_STREAM } from '../../events/index.ts';
import { schedulerMachine } from '../../machines/scheduler/index.ts';
import { allProjections } from '../../projections/index.ts';
import { replayJournal } from '../journal/replayJournal.ts';
import { replayPluginSupervisors } from '../../plugins/host/replaySupervisors.ts';
import { replayMemory } from '../memory/replayMemory.ts';
import { heartbeatIntervalsFrom, memoryConfigFrom } from '../modules/memoryModule.ts';
import { replayTurn, turnStreams } from '../turn/replayTurn.ts';
import { loadSettings } from '../modules/config.ts';
import { schedulerConfigFrom } from '../modules/schedulerModule.ts';
import { startRebuild } from '../replay/rebuildProjections.ts';
import { verifyProjections } from '../replay/verifyProjections.ts';
import { parse, positiveInteger } from './args.ts';
import { UsageError } from './cliErrors.ts';
import { defaultDataDir, existingLogPath, openEventLog } from './dataDir.ts';
import { progressReporter } from './progress.ts';

export const REPLAY_HELP = `Usage: homed replay [--data DIR] [--until SEQ | --verify] [--out FILE]

Rebuilds every projection from the event log into a fresh database (the live one is not
touched) and prints each read model's checksum.
  --until SEQ  stop after event SEQ and print the state of every projection there (JSON)
  --verify     compare the rebuilt read models with the live ones, and re-deliver the
               scheduler's journal and every recorded turn (with the recorded LLM answers,
               no model called) to fresh machines, comparing their facts byte for byte;
               exits 1 and names the first diverging projection or journal and sequence
  --out FILE   write the rebuilt read models to FILE (default: in memory, discarded)
Progress goes to stderr on long logs.
`;

export const replayCommand = async (args: string[], write: (line: string) => void): Promise<number> => {
  const { values } = parse(args, {
    data: { type: 'string' },
    until: { type: 'string' },
    verify: { type: 'boolean' },
    out: { type: 'string' },
    help: { type: 'boolean', short: 'h' },
  });
  if (values.help) {
    write(REPLAY_HELP);
    return 0;
  }
  const until = positiveInteger('until', values.until);
  if (until !== undefined && values.verify) throw new UsageError('--until and --verify cannot be combined');
  const dataDir = values.data ?? defaultDataDir();
  const store = openEventLog(existingLogPath(dataDir));
  const projections = allProjections();
  const progress = progressReporter('replay');
  try {
    if (values.verify) {
      const verdicts = await verifyProjections(store, store.db, projections, progress);
      for (const verdict of verdicts) {
        if (verdict.status === 'match')
          write(`${verdict.projection}: match at seq ${verdict.position} (checksum ${verdict.checksum.slice(0, 16)})`);
        else if (verdict.status === 'diverged') {
          write(
            `${verdict.projection}: DIVERGED${verdict.firstDivergingSeq === null ? '' : ` first at seq ${verdict.firstDivergingSeq}`}: ${verdict.detail}`,
          );
        } else write(`${verdict.projection}: not compared: ${verdict.detail}`);
      }
      const journal = await replayJournal({
        store,
        stream: SCHEDULER_STREAM,
        logic: schedulerMachine,
        input: { config: schedulerConfigFrom(loadSettings(dataDir)) },
      });
      if (journal.divergence) {
        const { seq, expected, actual } = journal.divergence;
        write(
          `scheduler journal: DIVERGED at seq ${seq}: recorded ${JSON.stringify(expected)}, this build decides ${JSON.stringify(actual)}`,
        );
      } else {
        write(`scheduler journal: match (${journal.messages.length} messages re-delivered, same facts byte for byte)`);
      }
      const supervisors = await replayPluginSupervisors(store);
      const supervisorDivergences = supervisors.filter((r) => r.divergence);
      for (const { stream, divergence } of supervisorDivergences) {
        write(
          `${stream}: DIVERGED at seq ${divergence!.seq}: recorded ${JSON.stringify(divergence!.expected)}, this build decides ${JSON.stringify(divergence!.actual)}`,
        );
      }
      if (supervisors.length > 0) {
        const messages = supervisors.reduce((n, r) => n + r.messages, 0);
        write(
          `plugin supervisors: ${supervisors.length - supervisorDivergences.length} of ${supervisors.length} journals match (${messages} messages re-delivered)`,
        );
      }
      const settings = loadSettings(dataDir);
      const memory = await replayMemory(store, memoryConfigFrom(settings), heartbeatIntervalsFrom(settings));
      if (memory.divergence) {
        const { seq, expected, actual } = memory.divergence;
        write(`memory: DIVERGED at seq ${seq}: recorded ${JSON.stringify(expected)}, this build decides ${JSON.stringify(actual)}`);
      } else if (memory.inputs > 0) {
        write(`memory: match (${memory.inputs} inputs re-delivered, ${memory.decisions} decisions re-decided byte for byte)`);
      }
      const turns = await turnStreams(store);
      const turnDivergences: string[] = [];
      for (const stream of turns) {
        const divergence = await replayTurn(store, stream);
        if (!divergence) continue;
        turnDivergences.push(stream);
        write(
          `${stream}: DIVERGED at seq ${divergence.seq}: recorded ${JSON.stringify(divergence.expected)}, ` +
            `this build decides ${JSON.stringify(divergence.actual)}`,
        );
      }
      if (turns.length > 0)
        write(`turns: ${turns.length - turnDivergences.length} of ${turns.length} replayed to the same facts without the model`);
      const diverged = verdicts.filter((v) => v.status === 'diverged');
      const journalsDiverged = (journal.divergence ? 1 : 0) + supervisorDivergences.length + (memory.divergence ? 1 : 0);
      if (diverged.length > 0 || journalsDiverged > 0 || turnDivergences.length > 0) {
        const first =
          diverged[0]?.projection ??
          (journal.divergence
            ? 'scheduler journal'
            : (supervisorDivergences[0]?.stream ?? (memory.divergence ? 'memory' : turnDivergences[0])));
        write(
          `verify: ${diverged.length} projection(s), ${journalsDiverged} actor journal(s) and ${turnDivergences.length} turn(s) diverged; first: ${first}`,
        );
        return 1;
      }
      write('verify: every compared projection and actor journal matches the log');
      return 0;
    }
    const head = await store.headSeq();
    const target = until ?? head;
    if (target > head) throw new UsageError(`--until ${target} is past the end of the log (head is seq ${head})`);
    const rebuild = startRebuild(store, projections, { ...(values.out ? { targetPath: values.out } : {}), onProgress: progress });
    try {
      const started = performance.now();
      const reached = await rebuild.advanceTo(target);
      const seconds = (performance.now() - started) / 1000;
      if (until !== undefined) {
        const state = Object.fromEntries(projections.map((p) => [p.name, rebuild.runner.dump(p.name)]));
        write(JSON.stringify({ seq: reached, projections: state }, null, 2));
        return 0;
      }
      for (const [name, checksum] of Object.entries(rebuild.runner.checksums())) write(`${name}: checksum ${checksum}`);
      write(`replay: rebuilt ${projections.length} projections from ${reached} events in ${seconds.toFixed(2)} s`);
      return 0;
    } finally {
      rebuild.close();
    }
  } finally {
    await store.close();
  }
};
