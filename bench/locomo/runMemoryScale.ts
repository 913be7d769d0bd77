/**
 * `npm run bench:memory-scale -- [--data DIR] [--sizes 1000,10000] [--questions N] [--passes N] [--json FILE]`:
 * what the memory costs as one conversation grows. The LoCoMo conversations' turns are fed, in
 * order and then again (each pass later in time, its turns cited apart), into one conversation of
 * one memory; at each size it reports recall latency (p50, p99 over the questions), the ingest
 * cost of the last turns before it (observe + heartbeats, ms per turn), the process's RSS and
 * how long a start would take to rebuild the recall index from the log and the read models, and
 * to read it back from the snapshot a clean stop leaves, and after a crash to read back an earlier one
 * and catch it up, with each as a ratio to the first size measured in the same run (recall's, to a
 * memory of the first size timed beside it, question by question). The issue's targets are
 * checked at the largest size. Progress goes to stderr.
 */
import { runLocomoCli } from './locomoCli.ts';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { log } from '../measure.ts';
import { positiveInt, UsageError } from '../options.ts';
import { conversationFiles } from './conversationFiles.ts';
import { loadConversation, type LocomoConversation } from './locomoData.ts';
import { freshBundle } from '../../bin/bundles.js';
import { keepProcessAlive, systemTimers } from '../../actors/clock/systemClock.ts';
import { compactHeap, settledRssMb } from '../../cli/heapCompaction.ts';
import { startDaemon } from '../daemonProcess.ts';
import { INDEX_SNAPSHOT_LAG } from '../../actors/modules/config.ts';
import { createMemoryRecallSystem, type MemoryRecallSystem } from './memorySystem.ts';
import type { LocomoTurn } from './recallSystem.ts';
import { percentile } from './score.ts';

/** Untimed passes over the questions before the timed ones, at each size. */
const WARM_UP_PASSES = 5;
const DEFAULT_DATA = fileURLToPath(new URL('../../../shared/data/locomo', import.meta.url));
const DEFAULT_SIZES = [1_000, 10_000];
/** The ingest cost at a size is the mean over this many turns just before it. */
const INGEST_WINDOW = 500;
/**
 * The start after a crash reads the snapshot written this many utterances before the size (at
 * most half of it): each utterance is at least one memory event, so at least the most an idle
 * daemon lets its snapshot lag (INDEX_SNAPSHOT_LAG) before it writes it again.
 */
const CRASH_LAG = INDEX_SNAPSHOT_LAG;

const HELP = `usage: npm run bench:memory-scale -- [options]

Feeds LoCoMo turns (every conversation in DIR, in order, then again later in time) into one
conversation of one memory and, at each size, reports recall p50/p99 over the questions, ingest
ms per turn over the ${INGEST_WINDOW} turns before it, RSS (as it is, ${CRASH_LAG} utterances after
the idle spell in which homed writes its index snapshot and compacts; and after the compacting
collection homed makes once idle for 30 s after work), and the ms a start spends rebuilding the
recall index (the part of a start that grows with what was said), to read it back from the
snapshot a clean stop leaves, and, as after a crash, to read back the snapshot written
${CRASH_LAG} utterances before (at most half the size; an idle daemon writes it again once
${INDEX_SNAPSHOT_LAG} memory events behind) and catch it up, each against the first size in the
same run. Recall is timed over
--passes passes after ${WARM_UP_PASSES} untimed ones, once the ingest's garbage is collected, question by
question in turn with a memory of the first size built afresh beside it: the ratio is to that, timed
under the same conditions (this machine's pace changes by up to 2x from one minute to the next). Then homed itself is started on the
data dir of the largest size (its start, its RSS once ready and after 15 s idle). Targets (issue
"Memory at scale"): recall p99 at the largest size within 2x of the first and under 20 ms,
ingest under 5 ms a turn, RSS under 400 MB (as it is, and once compacted), the start from the snapshot (after a stop, and
after a crash) and homed's start under 10 s.

options:
  --data DIR       LoCoMo conversation files (default ${DEFAULT_DATA})
  --sizes LIST     comma-separated utterance counts, ascending (default ${DEFAULT_SIZES.join(',')});
                   100000 is the issue's size (about 8 minutes here)
  --questions N    questions asked at each size (default 60, taken round-robin from the files)
  --passes N       timed passes over them (default 20; p50 and p99 are over every call)
  --json FILE      also write the rows as JSON to FILE
  --keep DIR       keep the data dir homed was started on in DIR (a new directory), to try it
  --no-daemon      skip starting homed on the data dir of the largest size (its start time and
                   RSS once ready; it runs from its bundle when npm run build made one of today's
                   sources, else through tsx, which starts slower and holds about 30 MB more)
  --help           show this text
`;

type Row = Readonly<{
  size: number;
  recallP50: number;
  recallP99: number;
  /**
   * Recall of a memory of the first size, built afresh and timed question by question beside this
   * size's: the baseline the targets compare with, under the same conditions (the machine's pace
   * changes by up to 2x between minutes, so the first size's own figures, timed minutes before, do not do).
   */
  referenceP50: number;
  referenceP99: number;
  ingestMsPerTurn: number;
  rssMb: number;
  /** RSS right after the compacting collection homed makes when idle (cli/idleCompaction.ts): what an idle daemon holds. */
  rssAfterGcMb: number;
  rebuildMs: number;
  snapshotMs: number;
  snapshotMb: number;
  /** A start after a crash: the snapshot of `crashLag` utterances before read back and caught up. */
  caughtUpMs: number;
  crashLag: number;
}>;

const parseSizes = (raw: string | undefined): number[] => {
  if (raw === undefined) return DEFAULT_SIZES;
  const sizes = raw.split(',').map((part) => positiveInt('sizes', part.trim(), 0));
  if (sizes.some((size, i) => i > 0 && size <= sizes[i - 1]!)) throw new UsageError(`--sizes ${raw}: give sizes in ascending order`);
  if (sizes[0]! < INGEST_WINDOW) throw new UsageError(`--sizes ${raw}: the first size must be at least ${INGEST_WINDOW}`);
  return sizes;
};

const parseOptions = (argv: string[]) => {
  const { values } = parseArgs({
    args: argv,
    options: {
      data: { type: 'string' },
      sizes: { type: 'string' },
      questions: { type: 'string' },
      passes: { type: 'string' },
      json: { type: 'string' },
      'no-daemon': { type: 'boolean' },
      keep: { type: 'string' },
      help: { type: 'boolean' },
    },
    strict: true,
  });
  if (values.keep !== undefined && existsSync(values.keep))
    throw new UsageError(`--keep ${values.keep}: it exists already; name a new directory`);
  if (values.keep !== undefined && values['no-daemon'])
    throw new UsageError('--keep keeps the data dir homed is started on; it goes without --no-daemon');
  return {
    help: values.help ?? false,
    data: values.data ?? DEFAULT_DATA,
    sizes: parseSizes(values.sizes),
    questions: positiveInt('questions', values.questions, 60),
    passes: positiveInt('passes', values.passes, 20),
    json: values.json,
    daemon: !values['no-daemon'],
    keep: values.keep,
  };
};

/** Latencies of recall over the questions, `passes` times after WARM_UP_PASSES untimed ones. */
const timedRecall = async (systems: readonly MemoryRecallSystem[], asked: readonly string[], passes: number): Promise<number[][]> => {
  // Untimed first, so what is timed is recall and not its code being compiled and optimised
  // (at the first size one untimed pass left p99 at 2-5 ms, four times what the next size gave).
  for (let pass = 0; pass < WARM_UP_PASSES; pass++) for (const question of asked) for (const s of systems) await s.recall(question, 10);
  const latencies = systems.map((): number[] => []);
  // Many passes, so p99 is not simply the few slowest calls (one pause of the machine decides those);
  // the systems take turns question by question, each first every other time.
  for (let pass = 0; pass < passes; pass++) {
    for (const [q, question] of asked.entries()) {
      for (let i = 0; i < systems.length; i++) {
        const which = (i + q + pass) % systems.length;
        const start = performance.now();
        await systems[which]!.recall(question, 10);
        latencies[which]!.push(performance.now() - start);
      }
    }
  }
  return latencies;
};

/** A memory fed the first `size` turns, as the measured one was: the reference timed beside each size. */
const referenceOf = async (conversations: readonly LocomoConversation[], size: number): Promise<MemoryRecallSystem> => {
  const reference = await createMemoryRecallSystem('scale');
  const turns = turnsForever(conversations);
  let lastAt = 0;
  for (let fed = 0; fed < size; fed++) {
    const turn = turns.next().value as LocomoTurn;
    await reference.ingest(turn);
    lastAt = turn.at;
  }
  await reference.finishIngest(lastAt);
  return reference;
};

/** The turns of every conversation, pass after pass, each pass after the last one's end, with ids of its own. */
function* turnsForever(conversations: readonly LocomoConversation[]): Generator<LocomoTurn> {
  const all = conversations.flatMap((c) => c.turns).sort((a, b) => a.at - b.at);
  const span = all.at(-1)!.at - all[0]!.at + 86_400_000;
  for (let pass = 0; ; pass++) {
    for (const turn of all) yield { ...turn, conversation: 'scale', diaId: `${pass}:${turn.diaId}`, at: turn.at + pass * span };
  }
}

/** What homed itself does on a data dir holding the memory of the largest size. */
type DaemonRow = Readonly<{
  size: number;
  /** Whether it ran from its bundle, as an installed checkout does, or from the sources through tsx. */
  bundled: boolean;
  /** ms from spawning `homed run` to `homed: ready`, the second time (the first catches the other projections up). */
  startMs: number;
  /** The daemon's resident memory once ready (VmRSS): the start's own garbage (the snapshot read whole) still in it. */
  rssMb: number;
  /** And after it sat idle for IDLE_MS, as a daemon does between messages (V8 collects and gives memory back when idle). */
  idleRssMb: number;
}>;

const IDLE_MS = 15_000;

const residentMb = (pid: number): number => {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = /^VmRSS:\s+(\d+) kB$/m.exec(status)?.[1];
  if (kb === undefined) throw new Error(`memory-scale: /proc/${pid}/status has no VmRSS line`);
  return Number(kb) / 1024;
};

/**
 * homed started twice on the data dir `system` leaves (the log, its read models and the index
 * snapshot): the first start catches every other projection up from the log and writes the
 * snapshot again at its stop; the second is timed, and the daemon's RSS read once it is ready.
 */
const measureDaemon = async (system: MemoryRecallSystem, size: number, dataDir: string): Promise<DaemonRow> => {
  await system.closeInto(dataDir);
  const bundled = (await freshBundle('homed')) !== undefined;
  log(
    `memory-scale: homed on ${size} utterances (from ${bundled ? 'its bundle' : 'the sources through tsx; npm run build makes the bundle'})`,
  );
  const first = await startDaemon(dataDir);
  const firstStop = await first.stop();
  if (firstStop) throw firstStop;
  const started = performance.now();
  const daemon = await startDaemon(dataDir);
  const startMs = performance.now() - started;
  const rssMb = residentMb(daemon.pid);
  await new Promise((resolve) => setTimeout(resolve, IDLE_MS));
  const idleRssMb = residentMb(daemon.pid);
  const passedOver = /the index snapshot is not used[^\n]*/.exec(daemon.output());
  const stopped = await daemon.stop();
  if (passedOver) throw new Error(`memory-scale: homed did not start from the index snapshot: ${passedOver[0]}`);
  // The memory's times run years ahead of the clock here (each pass later than the last): its heartbeats are due then.
  if (/TimeoutOverflowWarning/.test(daemon.output()))
    throw new Error('memory-scale: homed armed a timer longer than Node takes (it fired at once, again and again)');
  if (stopped) throw stopped;
  log(
    `memory-scale: homed started in ${startMs.toFixed(0)} ms; RSS ${rssMb.toFixed(0)} MB once ready, ${idleRssMb.toFixed(0)} MB after ${IDLE_MS / 1000} s idle`,
  );
  return { size, bundled, startMs, rssMb, idleRssMb };
};

const measure = async (options: ReturnType<typeof parseOptions>): Promise<{ rows: Row[]; daemon?: DaemonRow }> => {
  const conversations = conversationFiles(options.data, undefined).map(loadConversation);
  const questions = conversations.flatMap((c) => c.questions.map((q) => q.question));
  const asked = Array.from({ length: options.questions }, (_, i) => questions[(i * 7) % questions.length]!);
  const system = await createMemoryRecallSystem('scale');
  const rows: Row[] = [];
  let daemon: DaemonRow | undefined;
  const dataDir = mkdtempSync(join(tmpdir(), 'hologram-scale-daemon-'));
  try {
    const turns = turnsForever(conversations);
    let fed = 0;
    let lastAt = 0;
    for (const size of options.sizes) {
      let windowMs = 0;
      const crashLag = Math.min(CRASH_LAG, Math.floor(size / 2), size - fed);
      while (fed < size) {
        if (fed === size - crashLag) {
          await system.saveEarlierSnapshot();
          // As homed's idle spell does: the snapshot written, the heap compacted (its write leaves ~2x its size behind).
          compactHeap();
        }
        const turn = turns.next().value as LocomoTurn;
        const start = performance.now();
        await system.ingest(turn);
        if (fed >= size - INGEST_WINDOW) windowMs += performance.now() - start;
        fed++;
        lastAt = turn.at;
        if (fed % 1_000 === 0) log(`memory-scale: ${fed} of ${options.sizes.at(-1)} utterances fed`);
      }
      await system.finishIngest(lastAt);
      const usage = process.memoryUsage();
      const rssMb = usage.rss / 1_048_576;
      // What the RSS as it is holds: V8's heap (committed, and live or not yet collected) and the array buffers outside it.
      log(
        `memory-scale: at ${size} before compacting: heap ${(usage.heapTotal / 1_048_576).toFixed(0)} MB committed, ` +
          `${(usage.heapUsed / 1_048_576).toFixed(0)} MB used; array buffers ${(usage.arrayBuffers / 1_048_576).toFixed(0)} MB`,
      );
      // The collection homed makes when idle; it also keeps the ingest's garbage out of the recall
      // timed next (scavenges of 3-9 ms, charged to whichever recall ran into them, decided p99 at 1,000).
      compactHeap();
      // The system's timers are unref'd: waiting on them alone, the process would end mid-run (exit 13).
      const release = keepProcessAlive();
      const rssAfterGcMb = await settledRssMb(systemTimers).finally(release);
      // Built after the RSS is read, and closed before the next size is fed.
      const reference = await referenceOf(conversations, options.sizes[0]!);
      const [latencies, referenceLatencies] = await timedRecall([system, reference], asked, options.passes).finally(() =>
        reference.close(),
      );
      const start = await system.indexStart();
      const row: Row = {
        size,
        recallP50: percentile(latencies!, 50),
        recallP99: percentile(latencies!, 99),
        referenceP50: percentile(referenceLatencies!, 50),
        referenceP99: percentile(referenceLatencies!, 99),
        ingestMsPerTurn: windowMs / INGEST_WINDOW,
        rssMb,
        rssAfterGcMb,
        rebuildMs: start.rebuildMs,
        snapshotMs: start.snapshotMs,
        snapshotMb: start.snapshotBytes / 1_048_576,
        caughtUpMs: start.caughtUpMs ?? Number.NaN,
        crashLag,
      };
      log(
        `memory-scale: at ${size}: recall p50 ${row.recallP50.toFixed(2)} ms, p99 ${row.recallP99.toFixed(2)} ms ` +
          `(at ${options.sizes[0]} beside it: ${row.referenceP50.toFixed(2)} / ${row.referenceP99.toFixed(2)} ms); ingest ${row.ingestMsPerTurn.toFixed(2)} ms/turn; RSS ${row.rssMb.toFixed(0)} MB (${row.rssAfterGcMb.toFixed(0)} MB once compacted as homed does when idle); index rebuild ${row.rebuildMs.toFixed(0)} ms, from its snapshot ${row.snapshotMs.toFixed(0)} ms (${row.snapshotMb.toFixed(0)} MB), after a crash from the snapshot of ${crashLag} utterances before ${row.caughtUpMs.toFixed(0)} ms`,
      );
      rows.push(row);
    }
    if (options.daemon) daemon = await measureDaemon(system, options.sizes.at(-1)!, options.keep ?? join(dataDir, 'data'));
  } finally {
    if (!daemon) await system.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
  if (daemon && options.keep)
    log(`memory-scale: the data dir of ${daemon.size} utterances is kept in ${options.keep} (homed run --data ${options.keep})`);
  return daemon ? { rows, daemon } : { rows };
};

const TARGETS = [
  {
    what: 'recall p99 within 2x of the first size (a memory of that size timed beside it)',
    met: (last: Row) => last.recallP99 <= 2 * last.referenceP99,
  },
  { what: 'recall p99 under 20 ms', met: (last: Row) => last.recallP99 < 20 },
  { what: 'ingest under 5 ms a turn', met: (last: Row) => last.ingestMsPerTurn < 5 },
  { what: 'RSS (of this process, as it is) under 400 MB', met: (last: Row) => last.rssMb < 400 },
  { what: 'RSS (of this process, compacted as homed does when idle) under 400 MB', met: (last: Row) => last.rssAfterGcMb < 400 },
  { what: 'the index read back from its snapshot at start under 10 s', met: (last: Row) => last.snapshotMs < 10_000 },
  {
    what: 'the index at a start after a crash (an earlier snapshot read back and caught up) under 10 s',
    met: (last: Row) => last.caughtUpMs < 10_000,
  },
] as const;

const DAEMON_TARGETS = [
  { what: 'homed started under 10 s', met: (daemon: DaemonRow) => daemon.startMs < 10_000 },
  { what: "homed's RSS once ready under 400 MB", met: (daemon: DaemonRow) => daemon.rssMb < 400 },
  { what: `homed's RSS after ${IDLE_MS / 1000} s idle under 400 MB`, met: (daemon: DaemonRow) => daemon.idleRssMb < 400 },
] as const;

const mark = (met: boolean): string => (met ? 'met   ' : 'missed');

export const formatRows = (rows: readonly Row[], daemon?: DaemonRow): string => {
  const first = rows[0]!;
  const ratio = (value: number, base: number) => (base > 0 ? `${(value / base).toFixed(2)}x` : '-');
  const lines = [
    'utterances  recall p50 ms  recall p99 ms  ingest ms/turn  RSS MB       compacted MB index rebuild ms  from snapshot ms  after a crash ms ' +
      '(ratio to the first size; for recall, to a memory of that size timed beside it)',
    ...rows.map(
      (r) =>
        `${String(r.size).padStart(10)}  ${r.recallP50.toFixed(2).padStart(6)} ${ratio(r.recallP50, r.referenceP50).padStart(6)}  ${r.recallP99.toFixed(2).padStart(6)} ${ratio(r.recallP99, r.referenceP99).padStart(6)}  ${r.ingestMsPerTurn.toFixed(2).padStart(7)} ${ratio(r.ingestMsPerTurn, first.ingestMsPerTurn).padStart(6)}  ${r.rssMb.toFixed(0).padStart(4)} ${ratio(r.rssMb, first.rssMb).padStart(6)}  ${r.rssAfterGcMb.toFixed(0).padStart(4)} ${ratio(r.rssAfterGcMb, first.rssAfterGcMb).padStart(6)}  ${r.rebuildMs.toFixed(0).padStart(7)} ${ratio(r.rebuildMs, first.rebuildMs).padStart(7)}  ${r.snapshotMs.toFixed(0).padStart(7)} ${ratio(r.snapshotMs, first.snapshotMs).padStart(7)}  ${r.caughtUpMs.toFixed(0).padStart(7)} ${ratio(r.caughtUpMs, first.caughtUpMs).padStart(7)}`,
    ),
    ...(daemon
      ? [
          '',
          `homed on the data dir of ${daemon.size} utterances (${daemon.bundled ? 'from its bundle' : 'from the sources through tsx'}): ` +
            `started in ${daemon.startMs.toFixed(0)} ms, RSS ${daemon.rssMb.toFixed(0)} MB once ready and ${daemon.idleRssMb.toFixed(0)} MB after ${IDLE_MS / 1000} s idle`,
        ]
      : []),
    '',
    `targets at ${rows.at(-1)!.size} utterances:`,
    ...TARGETS.map((t) => `  ${mark(t.met(rows.at(-1)!))}  ${t.what}`),
    ...(daemon ? DAEMON_TARGETS.map((t) => `  ${mark(t.met(daemon))}  ${t.what}`) : []),
  ];
  return `${lines.join('\n')}\n`;
};

process.exitCode = await runLocomoCli('bench:memory-scale', HELP, parseOptions, async (options) => {
  // bin/memory-scale.js ran the bundle if this check finds it fresh (it made the same one).
  const bundled = (await freshBundle('memory-scale')) !== undefined;
  const from = bundled
    ? 'from its bundle'
    : "through tsx, whose loader adds tens of MB to this process's RSS; npm run build makes the bundle";
  log(`memory-scale: measuring in this process ${from}`);
  const { rows, daemon } = await measure(options);
  if (options.json) writeFileSync(options.json, `${JSON.stringify({ bundled, rows, daemon }, null, 2)}\n`);
  return `this process ${from}\n${formatRows(rows, daemon)}`;
});
