/**
 * Daemon turn figures: short turns through the running daemon, the way a user talks to it.
 * An instant local model (the scripted LLM server, real HTTP on 127.0.0.1) answers 'Noted.';
 * homed runs as a child process on a fresh data dir; one cli session sends messages one after
 * another in one conversation, each awaited to the end of its reply.
 *
 *   daemon.turn.p50 / .p99  ms per round trip (message sent to `end` read) vs ms of one durable
 *                           commit on the same disk: the ratio is a turn in commits' worth.
 *   daemon.turn.events      events the log grew by per turn, vs 1.
 *   daemon.turn.bytes       stored bytes of those rows per turn, vs 1 (the note adds the file's growth).
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { EVENT_LOG_FILE } from '../cli/dataDir.ts';
import { startLlmServer } from '../test/support/llmServer/index.ts';
import { CliSession } from './cliSession.ts';
import type { BenchContext } from './context.ts';
import { startDaemon } from './daemonProcess.ts';
import { appendedRowBytes, fileBytes, pageBytes, settledHeadSeq } from './eventLogFile.ts';
import { durableCommitMs } from './eventStoreBench.ts';
import { makeFigure, type Figure } from './figures.ts';
import { log, percentile } from './measure.ts';
import type { TempFiles } from './tempFiles.ts';

const ANSWER = 'Noted.';
const WARM_UP_TURNS = 5;
const COMMITS = 200;
const FROM = 'bench';

const turnsFor = (appends: number): number => Math.max(30, Math.min(300, Math.floor(appends / 10)));

export type DaemonTurns = Readonly<{
  turns: number;
  /** Round trip of each counted turn, ms. */
  times: readonly number[];
  events: number;
  rowBytes: number;
  /** Growth of events.db + its WAL on disk, and of the database's pages, over the counted turns. */
  fileGrowth: number;
  pageGrowth: number;
}>;

const writeSettings = (dataDir: string, baseUrl: string): void =>
  writeFileSync(
    join(dataDir, 'settings.json'),
    JSON.stringify({ llm: { sources: [{ name: 'local', adapter: 'openai', baseUrl, model: 'm' }] } }),
  );

const ask = async (session: CliSession, i: number): Promise<void> => {
  const reply = await session.ask(`message ${i}: remind me to water the garden`, FROM);
  if (reply !== ANSWER)
    throw new Error(`daemon.turn: turn ${i} replied ${JSON.stringify(reply)}, not the model's ${JSON.stringify(ANSWER)}`);
};

type LogMark = Readonly<{ head: number; file: number; pages: number }>;

const markLog = async (logPath: string): Promise<LogMark> => ({
  head: await settledHeadSeq(logPath),
  file: fileBytes(logPath),
  pages: pageBytes(logPath),
});

/** The warm-up turns, then `turns` timed ones, with the log marked before and after the timed ones. */
const talk = async (dataDir: string, turns: number): Promise<{ times: number[]; before: LogMark; after: LogMark }> => {
  const logPath = join(dataDir, EVENT_LOG_FILE);
  const session = await CliSession.connect(dataDir);
  try {
    for (let i = 0; i < WARM_UP_TURNS; i++) await ask(session, i);
    const before = await markLog(logPath);
    const times: number[] = [];
    for (let i = 0; i < turns; i++) {
      const t0 = performance.now();
      await ask(session, WARM_UP_TURNS + i);
      times.push(performance.now() - t0);
      if ((i + 1) % 50 === 0) log(`daemon.turn: ${i + 1}/${turns} turns`);
    }
    return { times, before, after: await markLog(logPath) };
  } finally {
    session.close();
  }
};

/** Starts the model and homed on a fresh data dir, talks, stops both. `nodeArgs` go to homed's node (e.g. --cpu-prof). */
export const driveDaemonTurns = async (temp: TempFiles, turns: number, nodeArgs: readonly string[] = []): Promise<DaemonTurns> => {
  const server = await startLlmServer([{ when: () => true, reply: { text: ANSWER }, repeat: true }]);
  try {
    const dataDir = temp.directory('daemon');
    writeSettings(dataDir, server.baseUrl('openai'));
    const daemon = await startDaemon(dataDir, nodeArgs);
    log(`daemon.turn: homed pid ${daemon.pid} ready on ${dataDir}`);
    let talked: Awaited<ReturnType<typeof talk>>;
    let stopped: Error | undefined;
    try {
      talked = await talk(dataDir, turns);
    } finally {
      stopped = await daemon.stop();
    }
    if (stopped) throw stopped;
    const { times, before, after } = talked;
    return {
      turns,
      times,
      events: after.head - before.head,
      // Read once homed has stopped: every row it acknowledged is in the file.
      rowBytes: appendedRowBytes(join(dataDir, EVENT_LOG_FILE), before.head, after.head),
      fileGrowth: after.file - before.file,
      pageGrowth: after.pages - before.pages,
    };
  } finally {
    await server.close();
  }
};

/** Figures daemon.turn.p50, .p99, .events and .bytes. */
export const daemonTurns = async (ctx: BenchContext): Promise<Figure[]> => {
  const commitMs = await durableCommitMs(ctx, COMMITS);
  log(`daemon.turn: one durable commit ${commitMs.toFixed(3)} ms (median of ${COMMITS})`);
  const run = await driveDaemonTurns(ctx.temp, turnsFor(ctx.appends));
  const perTurn = (n: number): number => n / run.turns;
  const lower = '(lower is better)';
  return [
    makeFigure('daemon.turn.p50', `ms/turn ${lower}`, percentile(run.times, 50), commitMs, {
      targetMax: 25,
      note:
        `${run.turns} turns (after ${WARM_UP_TURNS} warm-up) through homed's cli socket, model a local scripted server over HTTP; ` +
        `baseline one durable commit (median of ${COMMITS} awaited single-event appends, same disk), so ratio = commits' worth`,
    }),
    makeFigure('daemon.turn.p99', `ms/turn ${lower}`, percentile(run.times, 99), commitMs),
    makeFigure('daemon.turn.events', `events/turn ${lower}`, perTurn(run.events), 1, {
      targetMax: 15,
      note: "the log's head after the counted turns (once quiet) minus before, per turn",
    }),
    makeFigure('daemon.turn.bytes', `bytes/turn ${lower}`, perTurn(run.rowBytes), 1, {
      targetMax: 8192,
      note:
        'stored size of those rows (payload blob + id, stream, type, causation, correlation strings; not the integer columns or indexes); ' +
        `events.db + -wal on disk grew ${Math.round(perTurn(run.fileGrowth))} B/turn (its pages, WAL folded in: ${Math.round(perTurn(run.pageGrowth))} B/turn)`,
    }),
  ];
};
