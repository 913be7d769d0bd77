/**
 * `homed replay`: rebuilds every projection from the log into a fresh database.
 * `--until SEQ` prints every projection's state at SEQ; `--verify` compares with the live
 * read models and names the first diverging projection and sequence.
 */
import { existsSync, realpathSync } from 'node:fs';
import { dirname, resolve, sep } from 'node:path';
import { sqliteFileProblem } from '../adapters/sqlite/openDatabase.ts';
import { allProjections } from '../projections/index.ts';
import { loadSettings } from '../actors/modules/config.ts';
import { startRebuild } from '../actors/replay/rebuildProjections.ts';
import { reportLines } from '../actors/replay/replayer.ts';
import { verifyProjections } from '../actors/replay/verifyProjections.ts';
import { REPLAYERS } from './replayers.ts';
import { parse, positiveInteger } from './args.ts';
import { UsageError } from './cliErrors.ts';
import { dataDirFrom, existingLogPath, openEventLog } from './dataDir.ts';
import { type DataDirLock, describeHolder, lockDataDir } from './dataDirLock.ts';
import { progressReporter } from './progress.ts';

export const REPLAY_HELP = `Usage: homed replay [--data DIR] [--until SEQ | --verify] [--out FILE]

Rebuilds every projection from the event log into a fresh database (the live one is not
touched) and prints each read model's checksum.
  --until SEQ  stop after event SEQ and print the state of every projection there (JSON)
  --verify     compare the rebuilt read models with the live ones, and re-deliver every
               actor's journal (each kernel boot, the scheduler, each turn with its recorded
               model answers and tool results, each plugin supervisor, the memory) to fresh
               machines, comparing their facts byte for byte; nothing is called. Exits 1 and
               names the first diverging projection or journal and sequence
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
  const dataDir = dataDirFrom(values.data);
  const logPath = existingLogPath(dataDir);
  // Rebuilding into the data dir is writing there: only while no daemon holds it.
  const lock = values.out === undefined || values.verify ? undefined : lockOutput(dataDir, logPath, values.out);
  try {
    return await replayLog(logPath, dataDir, values, until, write);
  } finally {
    lock?.release();
  }
};

/** Whether directory `inner` is `outer` or below it, by real paths (false when either is missing). */
const isWithin = (inner: string, outer: string): boolean => {
  try {
    const [a, b] = [realpathSync(inner), realpathSync(outer)];
    return a === b || a.startsWith(`${b}${sep}`);
  } catch {
    return false;
  }
};

/** `--out FILE`: never the log itself, nor a file that is not a database; inside the data dir only under its lock. */
const lockOutput = (dataDir: string, logPath: string, out: string): DataDirLock | undefined => {
  const target = resolve(out);
  if (existsSync(target) && realpathSync(target) === realpathSync(logPath)) {
    throw new UsageError(`--out ${out} is the event log itself; give a new file for the rebuilt read models`);
  }
  // The messages of opening the log would speak of the log and --data: say what is wrong with --out.
  if (!existsSync(dirname(target))) throw new UsageError(`--out ${out}: the folder ${dirname(target)} does not exist; make it first`);
  if (existsSync(target) && sqliteFileProblem(target) !== null) {
    throw new UsageError(`--out ${out} exists and is not a database a rebuild wrote; give a new file (or one an earlier --out wrote)`);
  }
  if (!isWithin(dirname(target), dataDir)) return undefined;
  return lockDataDir(
    dataDir,
    'homed replay --out',
    (holder) =>
      `the data dir ${dataDir} is in use by ${describeHolder(holder)}, and --out ${out} would write into it; ` +
      'write the rebuild outside the data dir, or stop the daemon first',
  );
};

const replayLog = async (
  logPath: string,
  dataDir: string,
  values: Readonly<{ verify?: boolean; out?: string }>,
  until: number | undefined,
  write: (line: string) => void,
): Promise<number> => {
  const store = openEventLog(logPath);
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
      const settings = loadSettings(dataDir);
      const reports = [];
      for (const replayer of REPLAYERS) {
        const report = await replayer.replay(store, settings);
        reports.push(report);
        for (const line of reportLines(report)) write(line);
      }
      const diverged = verdicts.filter((v) => v.status === 'diverged');
      const journals = reports.flatMap((r) => r.verdicts.filter((v) => v.divergence).map((v) => v.journal));
      if (diverged.length > 0 || journals.length > 0) {
        write(
          `verify: ${diverged.length} projection(s) and ${journals.length} journal(s) diverged; first: ${diverged[0]?.projection ?? journals[0]}`,
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
