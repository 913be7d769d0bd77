/**
 * The kernel decider under random module graphs and random interleavings of ready, failed,
 * stopped and stop messages (including reports that make no sense: a ready from a module that
 * is not starting, a stopped from one not being stopped, a ready that provides less than it
 * declared, a layer plan in the wrong order). Whatever happens, the facts obey the layer rules:
 * no layer starts before the facilities it requires were produced, layers start in order and
 * never once the kernel stops, every started module is asked to stop exactly once, one at a
 * time, in reverse start order, and the kernel stops once, last. The XState wrapper emits the
 * same facts as the decider. At least 1,000 runs; `FC_RUNS=n` raises it.
 */
import fc from 'fast-check';
import { createActor } from 'xstate';
import { describe, expect, it } from 'vitest';
import {
  awaitingStop,
  booting,
  decideKernel,
  initialKernelState,
  kernelMachine,
  planLayers,
  type KernelFact,
  type KernelMessage,
  type KernelState,
  type ModuleDeclaration,
  type ModuleLayers,
} from '../../machines/kernel/index.ts';

const RUNS = Math.max(1_000, Number(process.env.FC_RUNS ?? 0));
const GIVEN = ['given'];

/** Module i provides `f<i>` and requires `given` and the facilities of some earlier modules: always a DAG. */
const graph = fc.integer({ min: 1, max: 7 }).chain((n) =>
  fc.array(fc.nat(), { minLength: n, maxLength: n }).map((masks) =>
    masks.map(
      (mask, i): ModuleDeclaration => ({
        name: `m${i}`,
        requires: [
          ...(mask & 1 ? GIVEN : []),
          ...Array.from({ length: i }, (_, j) => j).flatMap((j) => (mask & (2 << j) ? [`f${j}`] : [])),
        ],
        provides: [`f${i}`],
      }),
    ),
  ),
);

/** The layers as planned, or a plan in the wrong order the kernel must refuse to follow. */
const plan = (modules: readonly ModuleDeclaration[], how: 'planned' | 'one-layer' | 'reversed'): ModuleLayers => {
  const layers = planLayers(modules, GIVEN);
  if (how === 'one-layer') return [layers.flat()];
  return how === 'reversed' ? [...layers].reverse() : layers;
};

type Step = Readonly<{ kind: 'ready' | 'ready-short' | 'ready-other' | 'fail' | 'stopped' | 'stopped-other' | 'stop'; pick: number }>;

// Ready reports (and planned layers) weigh most, so runs reach the later layers and `running` as often as they stop early.
const planning = fc.oneof(
  { weight: 3, arbitrary: fc.constant('planned' as const) },
  fc.constantFrom('one-layer' as const, 'reversed' as const),
);

const step: fc.Arbitrary<Step> = fc.record({
  kind: fc.oneof(
    { weight: 6, arbitrary: fc.constant('ready' as const) },
    { weight: 2, arbitrary: fc.constant('stopped' as const) },
    fc.constantFrom('ready-short', 'fail', 'stopped-other', 'stop', 'ready-other'),
  ),
  pick: fc.nat(),
});

/** The message a step stands for where the kernel is now, or undefined when it has none to send. */
const messageFor = (state: KernelState, { kind, pick }: Step, at: number): KernelMessage | undefined => {
  const of = <T>(list: readonly T[]) => (list.length === 0 ? undefined : list[pick % list.length]);
  const declared = (name: string) => state.modules.find((m) => m.name === name)?.provides ?? [];
  const names = state.modules.map((m) => m.name);
  switch (kind) {
    case 'ready':
    case 'ready-short': {
      const module = of(booting(state));
      return module === undefined ? undefined : { type: 'module.ready', at, module, provided: kind === 'ready' ? declared(module) : [] };
    }
    case 'ready-other': {
      const module = of(names);
      return module === undefined ? undefined : { type: 'module.ready', at, module, provided: declared(module) };
    }
    case 'fail': {
      const module = of(state.started);
      return module === undefined ? undefined : { type: 'module.failed', at, module, error: `failure ${at}` };
    }
    case 'stopped': {
      const module = awaitingStop(state);
      return module === undefined ? undefined : { type: 'module.stopped', at, module };
    }
    case 'stopped-other': {
      const module = of(names);
      return module === undefined ? undefined : { type: 'module.stopped', at, module };
    }
    case 'stop':
      return { type: 'stop', at, reason: `stop ${at}` };
  }
};

/** Runs the steps, then stops the kernel and reports every stop until it is done. */
const run = (modules: readonly ModuleDeclaration[], layers: ModuleLayers, steps: readonly Step[]) => {
  const messages: KernelMessage[] = [{ type: 'boot', at: 0, pid: 1, dataDir: 'd', given: GIVEN, modules, layers }];
  let { state, facts } = decideKernel(initialKernelState, messages[0]!);
  const all: KernelFact[] = [...facts];
  const send = (message: KernelMessage) => {
    messages.push(message);
    ({ state, facts } = decideKernel(state, message));
    all.push(...facts);
  };
  steps.forEach((s, i) => {
    const message = messageFor(state, s, i + 1);
    if (message) send(message);
  });
  for (let at = steps.length + 1; !state.finished && at < steps.length + 100; at++) {
    const module = awaitingStop(state);
    send(module ? { type: 'module.stopped', at, module } : { type: 'stop', at, reason: 'drain' });
  }
  return { messages, facts: all, state };
};

const checkLayerRules = (modules: readonly ModuleDeclaration[], facts: readonly KernelFact[]) => {
  const produced = new Set(GIVEN);
  let nextLayer = 0;
  let stopping = false;
  for (const fact of facts) {
    if (fact.type === 'ModuleStarted') for (const f of fact.data.provides) produced.add(f);
    if (fact.type === 'ModuleFailed' || fact.type === 'ModuleStopRequested') stopping = true;
    if (fact.type !== 'LayerStartRequested') continue;
    expect(stopping, `layer ${fact.data.layer} started while stopping`).toBe(false);
    expect(fact.data.layer).toBe(nextLayer++);
    for (const name of fact.data.modules) {
      const missing = modules.find((m) => m.name === name)!.requires.filter((f) => !produced.has(f));
      expect(missing, `layer ${fact.data.layer} started ${name} before ${missing.join(', ')} existed`).toEqual([]);
    }
  }
};

const checkStopRules = (facts: readonly KernelFact[]) => {
  const started = facts.flatMap((f) => (f.type === 'LayerStartRequested' ? f.data.modules : []));
  const stops = facts.filter((f) => f.type === 'ModuleStopRequested' || f.type === 'ModuleStopped');
  const reverse = [...started].reverse();
  // Requested, stopped, requested, stopped ...: one at a time, each started module once, latest first.
  expect(stops.map((f) => `${f.type} ${f.data.module}`)).toEqual(
    reverse.flatMap((m) => [`ModuleStopRequested ${m}`, `ModuleStopped ${m}`]),
  );
  expect(facts.filter((f) => f.type === 'KernelStopped')).toHaveLength(1);
  expect(facts.at(-1)?.type).toBe('KernelStopped');
};

describe('kernel decider (property)', () => {
  it('keeps the layer and stop rules under any interleaving, and the machine decides the same', () => {
    fc.assert(
      fc.property(graph, planning, fc.array(step, { maxLength: 40 }), (modules, how, steps) => {
        const layers = plan(modules, how);
        const { messages, facts } = run(modules, layers, steps);
        checkLayerRules(modules, facts);
        checkStopRules(facts);

        const actor = createActor(kernelMachine);
        const emitted: KernelFact[] = [];
        actor.on('*', (fact) => emitted.push(fact));
        actor.start();
        for (const message of messages) actor.send(message);
        expect(emitted).toEqual(facts);
        expect(actor.getSnapshot().status).toBe('done');
      }),
      { numRuns: RUNS },
    );
  });

  it('starts every layer when every module reports ready with what it declared', () => {
    fc.assert(
      fc.property(graph, (modules) => {
        const layers = plan(modules, 'planned');
        const { facts } = run(
          modules,
          layers,
          modules.map(() => ({ kind: 'ready' as const, pick: 0 })),
        );
        expect(facts.filter((f) => f.type === 'ModuleStarted').map((f) => f.data.module)).toEqual(layers.flat());
        expect(facts.at(-1)).toEqual({ type: 'KernelStopped', data: { reason: 'drain' } });
      }),
      { numRuns: RUNS },
    );
  });
});
