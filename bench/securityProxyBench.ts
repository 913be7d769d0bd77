/**
 * Security proxy figures: what the firewall adds to a tool call. The same `files_write` call,
 * arguments `{ path: 'notes/a.txt', content: <~1 KB with @{KEY_1}> }`, goes straight to the
 * plugins' callTool (baseline) and through SecurityProxy.guardTools (value: alias fill, the
 * sandbox check on the declared `write: ['path']`, the call, then scrub and content review of
 * the ~2 KB result, which holds KEY_1's value). The proxy is built as the security module
 * builds it: a temp data dir whose vault holds 5 secrets (KEY_1 set for files_write), review
 * words, `sandboxFrom({})` (the files root, with notes/a.txt in it as after a first write).
 *
 * The tool is reached through the product's turnPluginsOf over a stand-in hub holding 12
 * registered tools. Its far end is the plugin.transport figure's msgpack child
 * (bench/fixtures/stdioEchoChild.ts through PluginConnection, with a per-request timer): the
 * call sends `{name, args, callId, reply}` and the child echoes it, so ~3 KB cross each way and
 * the result is the echoed `reply`. The same calls against a hub answering in process, at once,
 * show the proxy's own cost. Direct and proxied calls alternate call by call.
 *
 *   security.proxy.p50 / .p99       µs per call over the plugin transport, proxied vs direct;
 *                                   lower is better, so a ratio above 1 is the proxy's share.
 *   security.proxy.cost.p50 / .p99  the proxy's own µs per call (proxied minus direct, tool in
 *                                   process) vs the direct plugin round trip's µs at the same
 *                                   percentile: the proxy as a fraction of a round trip.
 *   security.proxy.named.p50        the issue's policy + fill + scrub per call, hot in process,
 *                                   as a share of the direct round trip (securityProxyParts.ts);
 *   security.proxy.sandbox.p50      the sandbox's path check alone, and
 *   security.proxy.review.p50       the content review alone, the same way.
 *
 * These are the transport's floor: the echo child answers at once and nothing is journaled. The
 * issue's target (at most 5% of a plugin tool round trip) is checked on the round trip as the
 * kernel makes it, journaled within a turn: securityProxyTurnBench.ts.
 */
import { spawn } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { SecretVault } from '../adapters/secrets/secretVault.ts';
import { DEFAULT_FILES_ROOT, sandboxFrom } from '../actors/modules/securityModule.ts';
import { SecretAliases } from '../actors/security/secretAliases.ts';
import { SecurityProxy } from '../actors/security/securityProxy.ts';
import type { TurnPlugins } from '../actors/turn/turnEffects.ts';
import type { ReviewRules } from '../machines/security/index.ts';
import type { ToolInvocation, ToolResult } from '../machines/turn/index.ts';
import type { PluginHub } from '../plugins/host/pluginHub.ts';
import { turnPluginsOf } from '../plugins/host/turnPlugins.ts';
import { PluginConnection } from '../plugins/protocol/index.ts';
import type { ToolReply } from '../plugins/sdk/pluginApi.ts';
import type { ToolEntry } from '../projections/plugins/pluginRegistry.ts';
import type { BenchContext } from './context.ts';
import { makeFigure, type Figure } from './figures.ts';
import { log, median, percentile } from './measure.ts';
import { type PartCall, partLatencies, type PartTimes } from './securityProxyParts.ts';

const REPO = fileURLToPath(new URL('../', import.meta.url));
const CHILD = fileURLToPath(new URL('./fixtures/stdioEchoChild.ts', import.meta.url));

export const TOOL = 'files_write';
export const PLUGIN = 'files';
const TIMEOUT_MS = 60_000;
const STDERR_KEPT = 4_096;

const SECRETS: readonly (readonly [string, string])[] = Array.from({ length: 5 }, (_, i) => [
  `KEY_${i + 1}`,
  `sk-bench-${i + 1}-${'0123456789abcdef'.repeat(3).slice(i, i + 40)}`,
]);
const KEY_1_VALUE = SECRETS[0]![1];

const PROSE =
  'The garden plan for the week: water the tomatoes early, move the basil into the shade, ' +
  'order two bags of compost and ask the neighbour about the ladder. ';

/** ~1 KB of note text with one alias in it. */
const CONTENT = `Notes for Monday.\n${PROSE.repeat(3)}Deploy key: @{KEY_1}\n${PROSE.repeat(3)}`.slice(0, 1024);

export const ARGS = { path: 'notes/a.txt', content: CONTENT } as const;

/** ~2 KB the tool answers with: the written file read back (so KEY_1's value is in it) and a listing. */
const RESULT = [
  `wrote ${ARGS.path} (${CONTENT.length} bytes)`,
  CONTENT.replace('@{KEY_1}', KEY_1_VALUE),
  ...Array.from({ length: 16 }, (_, i) => `notes/${String.fromCharCode(97 + i)}.txt  ${1000 + i * 37} bytes  2024-05-0${(i % 9) + 1}`),
  PROSE.repeat(2),
].join('\n');

const REVIEW_WORDS = ['confidential', 'salary', 'project-x'];

/** A registry like a daemon's: the files plugin's three tools among others. */
const TOOLS: readonly ToolEntry[] = [
  ...['memory_recall', 'memory_commit', 'graph_query', 'graph_link', 'timer_set', 'timer_cancel'].map((name) => ({
    name,
    plugin: name.split('_')[0]!,
    description: `The ${name} tool.`,
    parameters: { type: 'object', properties: { query: { type: 'string' } } },
  })),
  { name: 'files_read', plugin: PLUGIN, description: 'Read a file.', parameters: { type: 'object' }, access: { read: ['path'] } },
  { name: TOOL, plugin: PLUGIN, description: 'Write a file.', parameters: { type: 'object' }, access: { write: ['path'] } },
  { name: 'files_list', plugin: PLUGIN, description: 'List a directory.', parameters: { type: 'object' }, access: { read: ['path'] } },
  ...['web_fetch', 'shell_run', 'cli_reply'].map((name) => ({
    name,
    plugin: name.split('_')[0]!,
    description: `The ${name} tool.`,
    parameters: { type: 'object', properties: { url: { type: 'string' } } },
  })),
];

export type HubCall = (args: Readonly<Record<string, unknown>>, callId: string) => Promise<ToolReply>;

/** The product's TurnPlugins over a stand-in hub: its registry and its callTool, which answers through `call`. */
export const turnPlugins = (call: HubCall): TurnPlugins => {
  const registry = {
    plugins: new Map(),
    tools: new Map(TOOLS.map((t) => [t.name, t])),
    handlers: [],
    channels: new Map(),
    subscriptions: new Map(),
  };
  const hub = {
    registry,
    callTool: (_name: string, args: Readonly<Record<string, unknown>>, info: { callId: string }) => call(args, info.callId),
    runStage: async () => null,
  };
  return turnPluginsOf(hub as unknown as PluginHub);
};

/** The proxy as securityModule() builds it, over a data dir whose vault holds SECRETS, and its aliases. */
export const securityProxy = (
  dataDir: string,
  review: ReviewRules = { words: REVIEW_WORDS },
): Readonly<{ proxy: SecurityProxy; aliases: SecretAliases }> => {
  // The file as after the tool's first call: the files root, its notes folder and a.txt exist.
  mkdirSync(join(dataDir, DEFAULT_FILES_ROOT, dirname(ARGS.path)), { recursive: true });
  writeFileSync(join(dataDir, DEFAULT_FILES_ROOT, ARGS.path), CONTENT);
  const vault = SecretVault.open(dataDir);
  // KEY_1 may be filled into the tool called here; the others are set for another tool.
  for (const [name, value] of SECRETS) vault.set(name, value, name === SECRETS[0]![0] ? [TOOL] : ['web_*']);
  const aliases = new SecretAliases(dataDir);
  if (!aliases.watch()) throw new Error(`security.proxy: cannot watch the vault of ${dataDir}, as the daemon does`);
  const proxy = new SecurityProxy({
    aliases,
    review,
    ...sandboxFrom({}, dataDir),
  });
  return { proxy, aliases };
};

/** The figure's call, for the proxy's parts one by one. */
export const PART_CALL: PartCall = { tool: TOOL, args: ARGS, result: RESULT, access: { write: ['path'] } };

export type EchoChild = Readonly<{ call: HubCall; lastArgs: () => unknown; stop: () => Promise<void> }>;

/** The plugin.transport msgpack child; a tool call is an `echo` of `{name, args, callId, reply}` whose `reply` comes back. */
export const startEchoChild = async (): Promise<EchoChild> => {
  const child = spawn(process.execPath, ['--import', 'tsx', CHILD, 'msgpack'], { cwd: REPO, stdio: ['pipe', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr = (stderr + chunk.toString()).slice(-STDERR_KEPT)));
  child.stdin.on('error', () => {});
  const connection = new PluginConnection(child.stdout, child.stdin, { defaultRequestTimeoutMs: TIMEOUT_MS });
  connection.on('protocolError', (error) => log(`security.proxy: msgpack: ${error.code}: ${error.message}`));
  const stop = async (): Promise<void> => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    const timers: ReturnType<typeof setTimeout>[] = [];
    await new Promise<void>((resolve) => {
      child.once('exit', () => resolve());
      child.once('error', () => resolve());
      connection.close('bench done');
      timers.push(setTimeout(() => child.kill('SIGKILL'), 5_000));
      // A process that never started may never say 'exit'.
      timers.push(setTimeout(resolve, 6_000));
    });
    for (const timer of timers) clearTimeout(timer);
  };
  try {
    await connection.awaitHello({ timeoutMs: 30_000 });
  } catch (error) {
    await stop();
    throw new Error(
      `security.proxy: the echo child did not say hello: ${(error as Error).message}${stderr ? `; its stderr:\n${stderr}` : ''}`,
    );
  }
  let last: unknown;
  return {
    call: async (args, callId) => {
      const echoed = (await connection.request('echo', { name: TOOL, args, callId, reply: RESULT }, { timeoutMs: TIMEOUT_MS })) as {
        args?: unknown;
        reply?: unknown;
      } | null;
      last = echoed?.args;
      return String(echoed?.reply ?? '');
    },
    lastArgs: () => last,
    stop,
  };
};

export type Side = (invocation: ToolInvocation) => Promise<ToolResult>;

const SIGNAL = new AbortController().signal;

export const sides = (turns: TurnPlugins, proxy: SecurityProxy): Readonly<{ direct: Side; proxied: Side }> => {
  const guarded = proxy.guardTools(turns);
  return { direct: (i) => turns.callTool(i, SIGNAL), proxied: (i) => guarded.callTool(i, SIGNAL) };
};

/** The proxied call filled the alias, passed the sandbox, scrubbed the value and found nothing; the direct one did none of it. */
export const verify = async (label: string, pair: ReturnType<typeof sides>, reached?: () => unknown): Promise<void> => {
  const invocation: ToolInvocation = { callId: 'verify', name: TOOL, owner: PLUGIN, args: ARGS };
  const direct = await pair.direct(invocation);
  if (!direct.content.includes(KEY_1_VALUE)) throw new Error(`security.proxy: ${label}: the direct call did not return the tool's result`);
  const proxied = await pair.proxied(invocation);
  const problem = proxied.refused
    ? `was refused: ${proxied.refused}`
    : proxied.findings
      ? `had findings ${JSON.stringify(proxied.findings)}`
      : proxied.content.includes(KEY_1_VALUE) || !proxied.content.includes('@{KEY_1}')
        ? 'was not scrubbed'
        : proxied.filled?.join() !== 'KEY_1'
          ? `filled ${JSON.stringify(proxied.filled)}`
          : undefined;
  if (problem) throw new Error(`security.proxy: ${label}: the proxied call ${problem}`);
  const args = reached?.() as { content?: unknown } | undefined;
  if (reached && (typeof args?.content !== 'string' || !args.content.includes(KEY_1_VALUE))) {
    throw new Error('security.proxy: the plugin did not receive the filled secret');
  }
};

/** µs of `calls` direct and `calls` proxied calls, alternating call by call (and which goes first). */
const pairedLatencies = async (calls: number, pair: ReturnType<typeof sides>): Promise<{ direct: number[]; proxied: number[] }> => {
  const direct: number[] = [];
  const proxied: number[] = [];
  const timed = async (side: Side, into: number[], i: number): Promise<void> => {
    const invocation: ToolInvocation = { callId: `c${i}`, name: TOOL, owner: PLUGIN, args: ARGS };
    const t0 = performance.now();
    await side(invocation);
    into.push((performance.now() - t0) * 1000);
  };
  for (let i = 0; i < calls; i++) {
    if (i % 2 === 0) {
      await timed(pair.direct, direct, i);
      await timed(pair.proxied, proxied, i);
    } else {
      await timed(pair.proxied, proxied, i);
      await timed(pair.direct, direct, i);
    }
  }
  return { direct, proxied };
};

type Round = Readonly<{
  plugin: { direct: number[]; proxied: number[] };
  inProcess: { direct: number[]; proxied: number[] };
  parts: PartTimes;
}>;

const pct = (share: number): string => `${(share * 100).toFixed(1)}%`;

const UNIT = 'µs/call (lower is better)';

/** The whole proxy over the transport, and its own cost, at percentile `p`. */
const wholeFigures = (rounds: readonly Round[], calls: number, p: number): Figure[] => {
  const at = (xs: readonly number[]): number => percentile(xs, p);
  const direct = rounds.map((r) => at(r.plugin.direct));
  const proxied = rounds.map((r) => at(r.plugin.proxied));
  const cost = rounds.map((r) => at(r.inProcess.proxied) - at(r.inProcess.direct));
  const ratio = median(proxied.map((v, i) => v / direct[i]!));
  const share = median(cost.map((c, i) => c / direct[i]!));
  const inDirect = median(rounds.map((r) => at(r.inProcess.direct)));
  const inProxied = median(rounds.map((r) => at(r.inProcess.proxied)));
  return [
    makeFigure(`security.proxy.p${p}`, UNIT, median(proxied), median(direct), {
      ratio,
      note:
        `${calls} files_write calls per side per rep over the msgpack echo child (answering at once, nothing journaled), alternating; ` +
        `value through SecurityProxy.guardTools (fill, sandbox, scrub, review), baseline turnPluginsOf.callTool; the proxy adds ${pct(ratio - 1)}`,
    }),
    makeFigure(`security.proxy.cost.p${p}`, UNIT, median(cost), median(direct), {
      ratio: share,
      note:
        `the whole proxy's own µs (tool answering in process: proxied ${inProxied.toFixed(1)} µs - direct ${inDirect.toFixed(1)} µs) ` +
        `vs the direct round trip over the transport; ${pct(share)} of it`,
    }),
  ];
};

/** Each part's p50 µs, and the issue's (policy + fill + scrub), as shares of the direct round trip over the transport. */
const partFigures = (rounds: readonly Round[], calls: number): Figure[] => {
  const direct = rounds.map((r) => percentile(r.plugin.direct, 50));
  const figure = (name: string, perCall: (r: Round) => readonly number[], what: string): Figure => {
    const value = rounds.map((r) => percentile(perCall(r), 50));
    const share = median(value.map((v, i) => v / direct[i]!));
    return makeFigure(name, UNIT, median(value), median(direct), {
      ratio: share,
      note: `${what}, hot in process (${calls} calls per rep), vs the direct round trip over the transport; ${pct(share)} of it`,
    });
  };
  return [
    figure('security.proxy.named.p50', (r) => r.parts.named, `the issue's policy + fill + scrub, per call`),
    figure('security.proxy.sandbox.p50', (r) => r.parts.sandbox, "the sandbox's check of the path alone"),
    figure('security.proxy.review.p50', (r) => r.parts.review, 'the content review of the result alone'),
  ];
};

const figuresOf = (rounds: readonly Round[], calls: number): Figure[] => [
  ...wholeFigures(rounds, calls, 50),
  ...partFigures(rounds, calls),
  ...wholeFigures(rounds, calls, 99),
];

/**
 * Figures security.proxy.p50 / .p99, security.proxy.cost.p50 / .p99 and security.proxy.named,
 * .sandbox, .review .p50 (µs per call; lower is better). `ctx.appends` calls per side per rep (default 2,000), `ctx.reps` reps after a warm-up.
 */
export const securityProxyCost = async (ctx: BenchContext): Promise<Figure[]> => {
  const calls = ctx.appends;
  const { proxy, aliases } = securityProxy(ctx.temp.directory('security'));
  const inProcess = sides(
    turnPlugins(async () => RESULT),
    proxy,
  );
  log('security.proxy: starting the msgpack echo child');
  const child = await startEchoChild();
  try {
    const plugin = sides(turnPlugins(child.call), proxy);
    await verify('in process', inProcess);
    await verify('plugin', plugin, child.lastArgs);
    log('security.proxy: warm-up');
    await pairedLatencies(calls, plugin);
    await pairedLatencies(calls, inProcess);
    partLatencies(calls, proxy, aliases, PART_CALL);
    const rounds: Round[] = [];
    for (let rep = 1; rep <= ctx.reps; rep++) {
      const round = {
        plugin: await pairedLatencies(calls, plugin),
        inProcess: await pairedLatencies(calls, inProcess),
        parts: partLatencies(calls, proxy, aliases, PART_CALL),
      };
      rounds.push(round);
      const p50 = (xs: readonly number[]): string => percentile(xs, 50).toFixed(1);
      log(
        `security.proxy: rep ${rep}/${ctx.reps}: p50 plugin direct ${p50(round.plugin.direct)} µs, proxied ${p50(round.plugin.proxied)} µs; ` +
          `in process direct ${p50(round.inProcess.direct)} µs, proxied ${p50(round.inProcess.proxied)} µs`,
      );
    }
    return figuresOf(rounds, calls);
  } finally {
    await child.stop();
  }
};
