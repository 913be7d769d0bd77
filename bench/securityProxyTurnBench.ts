/**
 * The security proxy within a whole plugin tool call as the kernel makes it: a TurnActor on a
 * durable log, the model answering in process, first with one `files_write` call (the
 * security.proxy figure's ~1 KB arguments with an alias), then, given the ~2 KB result, with
 * 'Noted.'. The call is journaled, goes to the msgpack echo child and its result is journaled
 * before the model sees it, as in the daemon. Four turns alternate, in balanced orders: the tool
 * reached through the proxy (value), through the proxy doing only the parts (named: the
 * policy's verdict on the tool, then the proxy with review off and the tool's path access not
 * declared, so it fills and scrubs), straight through turnPluginsOf.callTool (direct), and a
 * turn whose model answers at once with no tool (plain).
 *
 *   security.proxy.turn.p50 / .p99   ms per turn with one plugin tool call, proxied vs direct;
 *                                    lower is better, so a ratio above 1 is the proxy's share.
 *   security.proxy.share.p50 / .p99  what the whole proxy adds to such a turn (proxied - direct)
 *                                    vs the plugin tool round trip inside it (direct - plain).
 *   security.proxy.share.named.p50   the same for policy + fill + scrub (named - direct): the
 *                                    issue's figure, with its target of at most 5%.
 */
import { randomIds, systemClock, systemTimers } from '../actors/clock/systemClock.ts';
import { TurnActor, type TurnEffects } from '../actors/turn/turnActor.ts';
import type { EventStore } from '../events/index.ts';
import { decideToolFor } from '../machines/security/index.ts';
import type { LlmAnswer, Toolset, TurnMessage } from '../machines/turn/index.ts';
import type { BenchContext } from './context.ts';
import { makeFigure, type Figure } from './figures.ts';
import { log, median, percentile } from './measure.ts';
import { ARGS, PLUGIN, securityProxy, type Side, sides, startEchoChild, TOOL, turnPlugins, verify } from './securityProxyBench.ts';
import { POLICY } from './securityProxyParts.ts';
import { openHologramStore } from './workload.ts';

const MAX_SHARE = 0.05;
/** The share is a difference of two ~1 ms turns, tens of µs apart, so its median needs more reps than the default 5. */
const MIN_REPS = 9;
const HISTORY_MESSAGES = 20;
const NOTED: LlmAnswer = { text: 'Noted.', toolCalls: [], finishReason: 'stop' };

const TOOLSET: Toolset = {
  tools: [
    {
      name: TOOL,
      description: 'Write a file.',
      parameters: { type: 'object', properties: { path: { type: 'string' }, content: { type: 'string' } } },
      owner: PLUGIN,
      origin: 'plugin',
      access: { write: ['path'] },
    },
  ],
  handlers: {},
  channels: [],
};

const HISTORY: readonly TurnMessage[] = Array.from({ length: HISTORY_MESSAGES }, (_, i) => ({
  role: i % 2 === 0 ? ('user' as const) : ('assistant' as const),
  content: `message ${i}: a line of conversation about the garden and the week ahead`,
}));

type Kind = 'plain' | 'direct' | 'proxied' | 'named';
const KINDS: readonly Kind[] = ['plain', 'direct', 'proxied', 'named'];

/** A turn's effects, with the toolset it runs with and a count of the tool results the model saw. */
type CountedEffects = TurnEffects & Readonly<{ toolset: Toolset; toolResults: () => number }>;

/**
 * The model: a files_write call first, 'Noted.' once the tool's result is in; at once when
 * `callTool` is absent. Behind the proxy the turn's toolset carries the vault's grants, as the
 * kernel's does, so the turn records the fill with the call.
 */
const effectsOf = (callTool: Side | undefined, firewall?: Pick<Toolset, 'secrets' | 'sandbox'>): CountedEffects => {
  let results = 0;
  return {
    toolset: { ...TOOLSET, ...firewall },
    complete: async (call) => {
      const last = call.messages.at(-1);
      if (last?.role === 'tool') {
        if (last.content.startsWith(`wrote ${ARGS.path}`)) results++;
        return NOTED;
      }
      if (!callTool) return NOTED;
      return { text: '', toolCalls: [{ id: 'call-1', name: TOOL, arguments: { ...ARGS } }], finishReason: 'tool_calls' };
    },
    callTool: (invocation) => {
      if (!callTool) throw new Error('security.proxy.turn: the plain turn called a tool');
      return callTool(invocation);
    },
    runHandler: async () => null,
    toolResults: () => results,
  };
};

/** One turn to its end, ms; throws unless the model saw the tool's result (or, plain, none) and the turn answered. */
const timedTurn = async (store: EventStore, effects: CountedEffects, kind: Kind): Promise<number> => {
  const before = effects.toolResults();
  const turnId = randomIds.next();
  const t0 = performance.now();
  const turn = new TurnActor({
    store,
    stream: `turn-${turnId}`,
    toolset: effects.toolset,
    effects,
    clock: systemClock,
    timers: systemTimers,
  });
  await turn.start({ turnId, input: 'save my notes', model: 'instant', maxRounds: 4, history: [...HISTORY], toolset: 'bench' });
  await turn.done;
  await turn.settled();
  const ms = performance.now() - t0;
  const { output, phase } = turn.state;
  const ranTool = effects.toolResults() === before + 1;
  if (phase !== 'done' || ranTool !== (kind !== 'plain') || output?.text !== NOTED.text) {
    throw new Error(`security.proxy.turn: the ${kind} turn did not run as meant (phase ${phase}, tool ${ranTool})`);
  }
  return ms;
};

/** The policy's verdict on the tool for the owner, then the call through a proxy that only fills and scrubs. */
const namedSide =
  (fillAndScrub: Side): Side =>
  (invocation) => {
    const verdict = decideToolFor(POLICY, { name: 'owner' }, invocation.name);
    if (!verdict.allowed) throw new Error(`security.proxy.turn: the policy refused ${invocation.name}: ${verdict.reason}`);
    return fillAndScrub(invocation);
  };

/** The named side filled the alias and scrubbed its value from the result, with nothing reviewed. */
const verifyNamed = async (named: Side): Promise<void> => {
  const result = await named({ callId: 'verify-named', name: TOOL, owner: PLUGIN, args: ARGS });
  if (result.filled?.join() !== 'KEY_1' || !result.content.includes('@{KEY_1}') || result.findings || result.refused) {
    throw new Error(`security.proxy.turn: the named side did not fill and scrub (${JSON.stringify({ ...result, content: undefined })})`);
  }
};

type Round = Readonly<Record<Kind, number[]>>;

/**
 * The orders the kinds of turn run in, round after round: a balanced Latin square (Williams), so
 * each kind comes first, and right after each other kind, equally often. Rotating one order put
 * 'named' after 'proxied' three rounds in four, and a turn after a costlier one runs slower: with
 * 'named' made the direct turn itself, the named figure read 0.01-0.025 instead of about 0.
 */
const BALANCED_ORDERS = [
  [0, 1, 3, 2],
  [1, 2, 0, 3],
  [2, 3, 1, 0],
  [3, 0, 2, 1],
] as const;

const round = async (store: EventStore, effects: Readonly<Record<Kind, CountedEffects>>, turns: number): Promise<Round> => {
  const times: Round = { plain: [], direct: [], proxied: [], named: [] };
  for (let i = 0; i < turns; i++) {
    for (const k of BALANCED_ORDERS[i % BALANCED_ORDERS.length]!) {
      const kind = KINDS[k]!;
      times[kind].push(await timedTurn(store, effects[kind], kind));
    }
  }
  return times;
};

const figuresOf = (rounds: readonly Round[], turns: number): Figure[] =>
  [50, 99].flatMap((p) => {
    const at = (r: Round, kind: Kind): number => percentile(r[kind], p);
    const proxied = median(rounds.map((r) => at(r, 'proxied')));
    const direct = median(rounds.map((r) => at(r, 'direct')));
    const added = rounds.map((r) => at(r, 'proxied') - at(r, 'direct'));
    const toolTrip = rounds.map((r) => at(r, 'direct') - at(r, 'plain'));
    const share = median(added.map((a, i) => a / toolTrip[i]!));
    const plain = median(rounds.map((r) => at(r, 'plain')));
    const named = rounds.map((r) => at(r, 'named') - at(r, 'direct'));
    const namedShare = median(named.map((a, i) => a / toolTrip[i]!));
    const namedFigure =
      p === 50
        ? [
            makeFigure('security.proxy.share.named.p50', 'ms/call (lower is better)', median(named), median(toolTrip), {
              ratio: namedShare,
              targetMax: MAX_SHARE,
              note:
                `what policy + fill + scrub add to the turn (named ${median(rounds.map((r) => at(r, 'named'))).toFixed(3)} - ` +
                `direct ${direct.toFixed(3)} ms) vs the plugin tool round trip within it`,
            }),
          ]
        : [];
    return [
      makeFigure(`security.proxy.turn.p${p}`, 'ms/turn (lower is better)', proxied, direct, {
        ratio: median(rounds.map((r) => at(r, 'proxied') / at(r, 'direct'))),
        note:
          `${turns} turns of each kind per rep on a durable log, the model in process calling files_write once (msgpack echo child); ` +
          `value through the security proxy, baseline straight to the plugin`,
      }),
      makeFigure(`security.proxy.share.p${p}`, 'ms/call (lower is better)', median(added), median(toolTrip), {
        ratio: share,
        note:
          `what the whole proxy (fill, sandbox, scrub, review) adds to the turn (proxied ${proxied.toFixed(3)} - direct ${direct.toFixed(3)} ms) ` +
          `vs the plugin tool round trip within it (direct - the same turn with no tool call, ${plain.toFixed(3)} ms)`,
      }),
      ...namedFigure,
    ];
  });

/**
 * Figures security.proxy.turn.p50 / .p99 and security.proxy.share.p50 / .p99. A tenth of
 * `ctx.appends` turns of each kind per rep (30 to 300), `ctx.reps` reps (at least MIN_REPS) after a warm-up round.
 */
export const securityProxyTurns = async (ctx: BenchContext): Promise<Figure[]> => {
  const turns = Math.max(30, Math.min(300, Math.floor(ctx.appends / 10)));
  const { proxy } = securityProxy(ctx.temp.directory('security-turn'));
  const { proxy: fillAndScrub, aliases: namedAliases } = securityProxy(ctx.temp.directory('security-turn-named'), { enabled: false });
  const path = ctx.temp.file('security-turn');
  const store = openHologramStore(path);
  log('security.proxy.turn: starting the msgpack echo child');
  const child = await startEchoChild();
  try {
    const pair = sides(turnPlugins(child.call), proxy);
    await verify('turn', pair, child.lastArgs);
    const named = namedSide(sides({ ...turnPlugins(child.call), accessOf: () => undefined }, fillAndScrub).proxied);
    await verifyNamed(named);
    const effects = {
      plain: effectsOf(undefined),
      direct: effectsOf(pair.direct),
      // What the proxy hands a turn with its tools: the grants and, for the whole proxy, the sandbox.
      proxied: effectsOf(
        pair.proxied,
        (({ secrets, sandbox }) => ({ secrets, sandbox }))(proxy.guardTools(turnPlugins(child.call)).toolset()),
      ),
      named: effectsOf(named, { secrets: namedAliases.grants() }),
    };
    log('security.proxy.turn: warm-up');
    await round(store, effects, turns);
    // Each proxied and named turn records its fill with the call, as the kernel's turns do.
    const fills = (await store.readAll({ types: ['SecretFilled'] })).length;
    if (fills !== 2 * turns) throw new Error(`security.proxy.turn: ${fills} SecretFilled in the warm-up's ${2 * turns} filled calls`);
    const rounds: Round[] = [];
    const reps = Math.max(MIN_REPS, ctx.reps);
    for (let rep = 1; rep <= reps; rep++) {
      rounds.push(await round(store, effects, turns));
      const last = rounds.at(-1)!;
      const p50 = (kind: Kind): string => percentile(last[kind], 50).toFixed(3);
      log(
        `security.proxy.turn: rep ${rep}/${reps}: p50 plain ${p50('plain')} ms, direct ${p50('direct')} ms, proxied ${p50('proxied')} ms, named ${p50('named')} ms`,
      );
    }
    return figuresOf(rounds, turns);
  } finally {
    await child.stop();
    await store.close();
    ctx.temp.remove(path);
  }
};
