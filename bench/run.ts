/**
 * `npm run bench [-- options]`: Hologram's benchmark. Every figure is a ratio against a raw
 * baseline doing the same work in the same process (baseline and value alternate; median of
 * the repetitions), so it compares across machines better than a bare rate would.
 *
 *   eventStore.append.single      awaited single-event appends (one durable commit each) vs
 *                                 raw better-sqlite3 autocommit INSERTs of the same rows.
 *   eventStore.append.batched     appends of 1,000 events each vs raw INSERTs in transactions
 *                                 of 1,000 (payload encoded in the timed loop). Target >= 0.8.
 *   eventStore.append.concurrent  single-event appends issued 100 at a time without awaiting
 *                                 each (group commit) vs raw autocommit INSERTs.
 *   eventStore.append.ids         µs per append of 3 events (a new stream each, as a turn's) to a
 *                                 log of 5 × --events events: the daemon's time-ordered ids vs
 *                                 random v4 UUIDs; lower is better.
 *   projection.rebuild            allProjections() rebuilt from zero over a mixed log into a
 *                                 fresh file DB vs a raw `SELECT * FROM events ORDER BY seq`
 *                                 scan of the same log. Target >= 0.5.
 *   scheduler.decide              messages through the XState scheduler (decide + fold + emit)
 *                                 vs a plain array queue handling the same messages.
 *   scheduler.journaled           messages through JournaledActor (each journaled durably
 *                                 before the next) vs the machine alone; with it,
 *   scheduler.eventsPerDecision   events appended per message (input + facts) vs 1.
 *   turn.overhead.p50 / .p99      the kernel's ms per turn with a 10,000-message context,
 *                                 journaled vs not (model answering in process); lower is
 *                                 better, so here a ratio above 1 is the journaling cost.
 *   plugin.roundtrip.p50 / .p99   µs per echo call of {text:'hi'} to a child over its stdio,
 *                                 awaited one at a time: plugin protocol msgpack frames
 *                                 (PluginConnection) vs newline-delimited JSON; lower is better,
 *                                 so here a ratio below 1 means msgpack is faster.
 *   plugin.throughput.calls       the same calls with 64 in flight, msgpack vs NDJSON (calls/s).
 *   plugin.throughput.bytes       1 MiB echoed each way, 4 in flight, in MB/s: msgpack bin vs the
 *                                 same bytes as base64 in an NDJSON string (encode/decode timed).
 *   security.proxy.p50 / .p99     µs per files_write call (~1 KB args with a secret alias, ~2 KB
 *                                 result) to the plugin.transport msgpack child: through the security
 *                                 proxy (fill, sandbox, scrub, review) vs straight to the plugins'
 *                                 callTool; lower is better, so a ratio above 1 is the proxy's share.
 *                                 Target <= 1.05 at p50.
 *   security.proxy.cost.p50 / .p99  the proxy's own µs per call (proxied minus direct, the tool
 *                                 answering in process) vs the direct plugin round trip's µs: the
 *                                 proxy as a fraction of a round trip. Target <= 0.05 at p50.
 *   security.proxy.turn.p50 / .p99  ms per journaled turn (TurnActor on a durable log, model in
 *                                 process) that calls files_write once on that child: through the
 *                                 proxy vs straight to the plugin. Target <= 1.05 at p50.
 *   security.proxy.share.p50 / .p99  what the proxy adds to that turn vs the tool's round trip in it
 *                                 (the direct turn minus the same turn with no tool call). Target <= 0.05 at p50.
 *   security.scale.*              ms to scrub and review with thousands of secrets or words vs a
 *                                 handful, and with words that share a prefix (securityScaleBench.ts).
 *   daemon.turn.p50 / .p99        ms per short turn through a running homed (child process, cli
 *                                 socket, a local scripted model over HTTP) vs ms of one durable
 *                                 commit: a turn in commits' worth; lower is better. Target <= 25.
 *   daemon.turn.events            events appended per turn vs 1. Target <= 15.
 *   daemon.turn.bytes             stored bytes of those events per turn vs 1. Target <= 8192.
 *   waiter.start                  ms from starting `node bin/waiter.js --help` to its exit (from
 *                                 its bundle, when fresh) vs `node -e 0`; lower is better. Target <= 4.
 *
 * Rates are events per second unless the unit says otherwise; higher ratios are better unless
 * the unit says lower is better. A missed target is reported, never an exit code. Databases
 * live in a temp dir under os.tmpdir(), removed at the end; the plugin children and homed are stopped.
 */
import { writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import type { BenchContext } from './context.ts';
import { appendBatched, appendConcurrent, appendSingle } from './eventStoreBench.ts';
import { formatTable, toJson, type Figure } from './figures.ts';
import { log } from './measure.ts';
import { daemonTurns } from './daemonTurnBench.ts';
import { pluginTransport } from './pluginTransportBench.ts';
import { projectionRebuild } from './rebuildBench.ts';
import { schedulerDecisions, schedulerJournaling } from './schedulerBench.ts';
import { securityProxyCost } from './securityProxyBench.ts';
import { appendIds } from './eventIdsBench.ts';
import { securityProxyTurns } from './securityProxyTurnBench.ts';
import { securityScale } from './securityScaleBench.ts';
import { turnOverhead } from './turnBench.ts';
import { waiterStart } from './waiterStartBench.ts';
import { TempFiles } from './tempFiles.ts';
import { positiveInt, UsageError } from './options.ts';

const FIGURES: readonly { name: string; run: (ctx: BenchContext) => Promise<Figure | Figure[]> }[] = [
  { name: 'eventStore.append.single', run: appendSingle },
  { name: 'eventStore.append.batched', run: appendBatched },
  { name: 'eventStore.append.concurrent', run: appendConcurrent },
  { name: 'eventStore.append.ids', run: appendIds },
  { name: 'projection.rebuild', run: projectionRebuild },
  { name: 'scheduler.decide', run: schedulerDecisions },
  { name: 'scheduler.journaled', run: schedulerJournaling },
  { name: 'turn.overhead', run: turnOverhead },
  { name: 'plugin.transport', run: pluginTransport },
  { name: 'security.proxy', run: securityProxyCost },
  { name: 'security.proxy.turn', run: securityProxyTurns },
  { name: 'security.scale', run: securityScale },
  { name: 'daemon.turn', run: daemonTurns },
  { name: 'waiter.start', run: waiterStart },
];

const HELP = `usage: npm run bench [-- options]

Measures the event store, the projection rebuild, the scheduler, the turn, the plugin
transport, the security proxy, turns through the running daemon and waiter's start against
baselines and prints a table (value, baseline, ratio = value/baseline, target). Progress goes
to stderr.

options:
  --json FILE     also write { "<figure>": { value, baseline, ratio, unit } } to FILE
  --events N      events of the batched-append and rebuild figures, messages of scheduler.decide (default 100000)
  --appends N     appends of the single and concurrent figures, messages of scheduler.journaled,
                  calls per latency round of plugin.transport and security.proxy (default 2000);
                  a tenth of it, 30 to 300, is the turns of daemon.turn
  --reps N        timed repetitions of each side, median kept (default 5; waiter.start at least 10,
                  security.proxy.turn at least 9)
  --only NAMES    comma-separated figures to run (default all):
                  ${FIGURES.map((f) => f.name).join(', ')}
  --help          show this text

A quick check: npm run bench -- --events 10000 --appends 500 --reps 1
`;

const parseOptions = (argv: string[]) => {
  const { values } = parseArgs({
    args: argv,
    options: {
      json: { type: 'string' },
      events: { type: 'string' },
      appends: { type: 'string' },
      reps: { type: 'string' },
      only: { type: 'string' },
      help: { type: 'boolean' },
    },
    strict: true,
  });
  const only = values.only
    ?.split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  const unknown = only?.filter((name) => !FIGURES.some((f) => f.name === name)) ?? [];
  if (unknown.length > 0) {
    throw new UsageError(`--only: no figure named ${unknown.join(', ')}; known: ${FIGURES.map((f) => f.name).join(', ')}`);
  }
  return {
    help: values.help ?? false,
    json: values.json,
    only,
    events: positiveInt('events', values.events, 100_000),
    appends: positiveInt('appends', values.appends, 2_000),
    reps: positiveInt('reps', values.reps, 5),
  };
};

const main = async (): Promise<void> => {
  let options: ReturnType<typeof parseOptions>;
  try {
    options = parseOptions(process.argv.slice(2));
  } catch (error) {
    process.stderr.write(`bench: ${(error as Error).message}\n(npm run bench -- --help lists the options)\n`);
    process.exitCode = 2;
    return;
  }
  if (options.help) {
    process.stdout.write(HELP);
    return;
  }
  const temp = new TempFiles();
  const onSignal = (): void => {
    temp.dispose();
    process.exit(130);
  };
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  try {
    const ctx: BenchContext = { temp, events: options.events, appends: options.appends, reps: options.reps };
    log(`temp dir ${temp.dir}; events ${ctx.events}, appends ${ctx.appends}, reps ${ctx.reps}`);
    const figures: Figure[] = [];
    for (const figure of FIGURES) {
      if (options.only && !options.only.includes(figure.name)) continue;
      figures.push(...[await figure.run(ctx)].flat());
    }
    process.stdout.write(`${formatTable(figures)}\n`);
    if (options.json !== undefined) {
      writeFileSync(options.json, `${JSON.stringify(toJson(figures), null, 2)}\n`);
      log(`wrote ${options.json}`);
    }
  } finally {
    temp.dispose();
  }
};

await main();
