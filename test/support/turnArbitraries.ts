/**
 * Generators for the turn's property test: toolsets (tools, stage handlers of random plugins
 * and scopes on random stages, output channels), turn requests, and the steps a random world
 * takes (answers, failures, chunks, handler results, timeouts, tool results, stops, junk).
 * Pools are small on purpose, so names collide: a model calls tools the toolset lacks, a
 * handler's plugin owns the tool it guards or not, call ids repeat across rounds.
 */
import fc from 'fast-check';
import { STAGES, type HandlerRef, type OutputChannel, type RegisteredTool, type StageName } from '../../events/index.ts';
import type { StageHandlers, Toolset, TurnStopReason } from '../../machines/turn/index.ts';

const tool = (name: string, owner: string, access?: RegisteredTool['access']): RegisteredTool => ({
  name,
  owner,
  origin: 'plugin',
  description: `${name} tool`,
  parameters: { type: 'object' },
  ...(access ? { access } : {}),
});

export const TOOL_POOL: readonly RegisteredTool[] = [
  tool('files_read', 'files', { read: ['path'] }),
  tool('files_write', 'files', { write: ['path'] }),
  tool('web_fetch', 'web'),
];

/** The sandbox a firewall hands some turns: paths under /w, but not the daemon's own /w/secrets. */
export const SANDBOX = { rules: { read: ['/w'], write: ['/w'] }, base: { cwd: '/w', home: '/w' }, protectedPaths: ['/w/secrets'] };
/** Paths that sandbox refuses as written: outside its roots, and its protected folder. */
export const REFUSED_PATHS: readonly string[] = ['/etc/passwd', 'secrets/v'];

export const CHANNEL_POOL: readonly OutputChannel[] = [
  { name: 'cli', owner: 'cli', capabilities: 1, metaDoc: '' },
  { name: 'qq', owner: 'qq', capabilities: 3, metaDoc: '{ "group": string }' },
];

/** Names a model may call: the pool's tools, both tools of each channel, and a tool nobody registered. */
const CALLABLE = [...TOOL_POOL.map((t) => t.name), 'output_send__cli', 'output_send__cli_help', 'output_send__qq', 'no_such_tool'] as const;

const PLUGINS = ['files', 'web', 'guard', 'cli'] as const;

/** Models often wrap their text in whitespace: two of these do. */
/** '@{TOKEN}': a handler that rewrites a call's path to it adds an alias the model never wrote. */
export const TEXTS = ['', 'hello', ' ok\n', 'let me check', 'Checking.\n', 'secret', 'done.', '@{TOKEN}'] as const;
export const textArb = fc.constantFrom(...TEXTS);

/** A tool call without its id: the world numbers calls per answer, the way providers do. */
export type CallSpec = Readonly<{ name: string; args: Readonly<Record<string, unknown>> }>;

const argsArb = fc.constantFrom<Record<string, unknown>>(
  {},
  { path: 'a' },
  { payload: 'hi', type: 'text' },
  { payload: 3, type: 'text' },
  { payload: 'pic', type: 'image' },
  { path: '@{TOKEN}' },
  { path: '/etc/passwd', content: '@{TOKEN}' },
  { path: 'secrets/v' },
  { path: '@{TOKEN}', to: ['@{MISSING}'] },
  { payload: '@{TOKEN}', type: 'text' },
);
const callArb = fc.record({ name: fc.constantFrom(...CALLABLE), args: argsArb });
/** Mostly some calls, so turns go round their tool loop; an answer without calls ends a turn. */
export const callsArb = fc.oneof(
  { weight: 1, arbitrary: fc.constant([]) },
  { weight: 3, arbitrary: fc.array(callArb, { minLength: 1, maxLength: 3 }) },
);
/** The most calls one answer (or one post_action handler) may ask for: bounds the work of a round. */
export const MAX_CALLS = 3;

const handlerArb = fc.record({
  plugin: fc.constantFrom(...PLUGINS),
  scope: fc.constantFrom<HandlerRef['scope']>('global', 'global', 'own_tools'),
});

/** Handlers on some stages, ids unique per stage (`plugin/stage/n`, as the plugin hub makes them). */
const stageArb = fc.oneof(
  { weight: 2, arbitrary: fc.constantFrom<StageName>('before_toolcall', 'after_toolcall') },
  { weight: 3, arbitrary: fc.constantFrom(...STAGES) },
);
const handlersArb: fc.Arbitrary<StageHandlers> = fc
  .array(fc.tuple(stageArb, fc.array(handlerArb, { minLength: 1, maxLength: 2 })), { maxLength: 4 })
  .map((entries) => {
    const handlers: Partial<Record<StageName, HandlerRef[]>> = {};
    for (const [stage, refs] of entries) {
      const list = handlers[stage] ?? [];
      for (const ref of refs) list.push({ id: `${ref.plugin}/${stage}/${list.length}`, ...ref });
      handlers[stage] = list;
    }
    return handlers;
  });

/** Prints a toolset as its names (`tools files_read web_fetch · channels cli · before_toolcall guard/…/0 own_tools`) in counterexamples. */
const summarised = (toolset: Toolset): Toolset => {
  const handlers = Object.entries(toolset.handlers).map(
    ([stage, refs]) => `${stage} ${(refs ?? []).map((h) => `${h.id}${h.scope === 'own_tools' ? ' own_tools' : ''}`).join(', ')}`,
  );
  const text = [
    `tools ${toolset.tools.map((t) => t.name).join(' ') || '-'}`,
    `channels ${toolset.channels.map((c) => c.name).join(' ') || '-'}`,
    ...handlers,
  ].join(' · ');
  return Object.defineProperty({ ...toolset }, fc.toStringMethod, { value: () => `Toolset(${text})` });
};

/** Tools whose calls wait for a person (the policy's `approve`), as the runner records them. */
const approveArb = fc.oneof(
  { weight: 2, arbitrary: fc.constant([]) },
  { weight: 1, arbitrary: fc.subarray(TOOL_POOL.map((t) => ({ name: t.name, reason: `security.tools.approve has '${t.name}'` }))) },
);

/** The vault's grants as the firewall hands them to a turn (none: no firewall), and sometimes why its input gets no secret. */
const secretsArb = fc.oneof(
  { weight: 2, arbitrary: fc.constant({}) },
  { weight: 2, arbitrary: fc.constant({ secrets: [{ name: 'TOKEN', tools: ['files_*'] }] }) },
  { weight: 1, arbitrary: fc.constant({ secrets: [{ name: 'TOKEN', tools: ['*'] }], secretsRefused: 'not from the owner' }) },
);

export const toolsetArb: fc.Arbitrary<Toolset> = fc
  .record({
    tools: fc.oneof(fc.constant([...TOOL_POOL]), fc.subarray([...TOOL_POOL])),
    channels: fc.subarray([...CHANNEL_POOL]),
    handlers: fc.oneof({ weight: 1, arbitrary: fc.constant({}) }, { weight: 3, arbitrary: handlersArb }),
    approve: approveArb,
    secrets: secretsArb,
    sandboxed: fc.boolean(),
    // Too many replies to the turn's principal wait for approval already: none of its calls may wait.
    approvalsFull: fc.oneof({ weight: 4, arbitrary: fc.constant(false) }, { weight: 1, arbitrary: fc.constant(true) }),
  })
  .map(({ approve, secrets, sandboxed, approvalsFull, ...toolset }) => ({
    ...toolset,
    ...(approve.length ? { approve } : {}),
    ...(approvalsFull ? { approvalsRefused: '8 replies to qq.guest already wait for approval' } : {}),
    ...secrets,
    ...(sandboxed ? { sandbox: SANDBOX } : {}),
  }))
  .map(summarised);

/** Every tool and channel, a before_toolcall guard (global, or own_tools of a tool's plugin), and handlers elsewhere as they come. */
export const guardedToolsetArb: fc.Arbitrary<Toolset> = fc
  .tuple(handlersArb, fc.array(handlerArb, { minLength: 1, maxLength: 2 }), secretsArb)
  .map(([handlers, guards, secrets]) => ({
    ...secrets,
    tools: [...TOOL_POOL],
    channels: [...CHANNEL_POOL],
    handlers: {
      ...handlers,
      before_toolcall: [
        ...(handlers.before_toolcall ?? []),
        ...guards.map((g, i) => ({ id: `${g.plugin}/guard/${i}`, ...g, plugin: g.scope === 'global' ? g.plugin : 'files' })),
      ],
    },
  }))
  .map(summarised);

/** A toolset a plugin hub would not produce: one stage lists the same handler id twice. */
export const duplicateHandlerToolsetArb: fc.Arbitrary<Toolset> = fc
  .tuple(toolsetArb, fc.constantFrom(...STAGES))
  .map(([toolset, stage]) => {
    const ref: HandlerRef = { id: `guard/${stage}/twice`, plugin: 'guard', scope: 'global' };
    return summarised({ ...toolset, handlers: { ...toolset.handlers, [stage]: [ref, ref] } });
  });

export type TurnRequestSpec = Readonly<{
  input: string;
  maxRounds: number;
  stageTimeoutMs?: number;
  systemPrompt?: string;
  history: readonly Readonly<{ role: 'user' | 'assistant'; content: string }>[];
}>;

export const requestArb = (stageTimeoutMs: fc.Arbitrary<number | undefined> = fc.constantFrom(undefined, 1_000)) =>
  fc
    .record({
      input: fc.constantFrom('hi', 'read a', ''),
      maxRounds: fc.oneof({ weight: 6, arbitrary: fc.integer({ min: 1, max: 4 }) }, { weight: 1, arbitrary: fc.constant(0) }),
      stageTimeoutMs,
      systemPrompt: fc.constantFrom(undefined, 'be brief'),
      history: fc.array(fc.record({ role: fc.constantFrom('user' as const, 'assistant' as const), content: textArb }), { maxLength: 2 }),
    })
    .map(
      ({ stageTimeoutMs: timeout, systemPrompt, ...rest }): TurnRequestSpec => ({
        ...rest,
        ...(timeout !== undefined ? { stageTimeoutMs: timeout } : {}),
        ...(systemPrompt !== undefined ? { systemPrompt } : {}),
      }),
    );

/** What a stage handler answers; the world turns `change` into a change the run's stage admits. */
export type HandlerReply = 'nothing' | 'change' | 'response' | 'deny' | 'ask' | 'refused' | 'error';

/** What the security proxy says of a tool result (recorded with it): nothing, secrets it filled, findings, a withheld result, a refusal. */
export type ProxyVerdict = 'none' | 'filled' | 'flagged' | 'blocked' | 'refused';

export const JUNK_KINDS = ['round', 'run', 'handler', 'call', 'request', 'approval'] as const;
export type JunkKind = (typeof JUNK_KINDS)[number];

export const STOP_REASONS: readonly TurnStopReason[] = ['stop', 'preempted', 'shutdown', 'abandoned'];

export type Step =
  /** The model answers the outstanding round: the pieces streamed so far, then `text`. */
  | Readonly<{ t: 'answer'; text: string; calls: readonly CallSpec[] }>
  | Readonly<{ t: 'fail'; error: string | undefined }>
  | Readonly<{ t: 'chunk'; text: string }>
  | Readonly<{ t: 'handler'; pick: number; reply: HandlerReply; text: string; calls: readonly CallSpec[] }>
  | Readonly<{ t: 'timeout'; pick: number }>
  | Readonly<{ t: 'tool'; pick: number; content: string; isError: boolean; verdict: ProxyVerdict }>
  /** A person answers a call waiting for approval. */
  | Readonly<{ t: 'approve'; pick: number; approved: boolean }>
  | Readonly<{ t: 'stop'; reason: TurnStopReason }>
  /** A message that answers nothing outstanding: a stale round, a finished run, a settled handler, a done call, a second request. */
  | Readonly<{ t: 'junk'; kind: JunkKind; pick: number }>;

const replyArb = fc.constantFrom<HandlerReply>('nothing', 'change', 'response', 'deny', 'ask', 'refused', 'error');

/**
 * How the world's stage handlers answer in one run: a mix, or one temper throughout (every call
 * denied, every stage answering the turn, every handler failing ...), so that whole rounds of
 * denials or answers are as common as single ones.
 */
export const temperArb: fc.Arbitrary<readonly HandlerReply[]> = fc.oneof(
  fc.array(replyArb, { minLength: 2, maxLength: 5 }),
  fc
    .constantFrom<HandlerReply>('deny', 'deny', 'deny', 'response', 'response', 'change', 'change', 'nothing', 'refused', 'error')
    .map((r) => [r]),
);

const weighted = (...entries: readonly (readonly [number, fc.Arbitrary<Step>])[]): fc.Arbitrary<Step>[] =>
  entries.flatMap(([weight, arb]) => Array.from({ length: weight }, () => arb));

/**
 * The world's steps, as a list for `fc.commands` (an entry listed n times is picked n times as
 * often). Stops and junk apply at any time, so they are rare: most runs get far into a turn.
 */
export const stepArbs = (temper: readonly HandlerReply[]): readonly fc.Arbitrary<Step>[] =>
  weighted(
    [4, fc.record({ t: fc.constant('answer' as const), text: textArb, calls: callsArb })],
    [1, fc.record({ t: fc.constant('fail' as const), error: fc.constantFrom(undefined, 'all providers failed: 401') })],
    [2, fc.record({ t: fc.constant('chunk' as const), text: textArb })],
    [
      5,
      fc.record({ t: fc.constant('handler' as const), pick: fc.nat(7), reply: fc.constantFrom(...temper), text: textArb, calls: callsArb }),
    ],
    [1, fc.record({ t: fc.constant('timeout' as const), pick: fc.nat(7) })],
    [
      4,
      fc.record({
        t: fc.constant('tool' as const),
        pick: fc.nat(7),
        content: textArb,
        isError: fc.boolean(),
        verdict: fc.constantFrom<ProxyVerdict>('none', 'none', 'none', 'filled', 'flagged', 'blocked', 'refused'),
      }),
    ],
    [2, fc.record({ t: fc.constant('approve' as const), pick: fc.nat(7), approved: fc.boolean() })],
    [1, fc.record({ t: fc.constant('stop' as const), reason: fc.constantFrom(...STOP_REASONS) })],
    [2, fc.record({ t: fc.constant('junk' as const), kind: fc.constantFrom(...JUNK_KINDS), pick: fc.nat(7) })],
  );

/** How the world answers what is still outstanding once the steps ran out: cycled through, so a turn may loop to its limit. */
export type DrainPlan = Readonly<{
  answers: readonly Readonly<{ text: string; calls: readonly CallSpec[] }>[];
  replies: readonly HandlerReply[];
  /** Answer a stage run by timing it out rather than handler by handler. */
  timeouts: readonly boolean[];
}>;

export const drainArb = (temper: readonly HandlerReply[]): fc.Arbitrary<DrainPlan> =>
  fc.record({
    answers: fc.array(fc.record({ text: textArb, calls: callsArb }), { minLength: 1, maxLength: 4 }),
    replies: fc.constant(temper),
    timeouts: fc.array(fc.boolean(), { minLength: 1, maxLength: 3 }),
  });
