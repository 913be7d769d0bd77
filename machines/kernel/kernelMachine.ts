/**
 * The kernel as an XState machine: starts modules layer by layer (in parallel within a
 * layer), each as a child actor, re-checks before each layer that the facilities it needs
 * were produced, and stops every started module in reverse order. Lifecycle facts are
 * emitted as events for the log. Pure: modules are provided as the `module` actor logic.
 */
import { and, assign, emit, enqueueActions, fromCallback, setup } from 'xstate';
import type { EventNamed } from '../../events/index.ts';
import type { ModuleLayers } from './planLayers.ts';
import type { ModuleDeclaration } from './moduleDeclaration.ts';

export type ModuleInput = Readonly<{ name: string; layer: number }>;

/** What a module actor sends back to the kernel. */
export type ModuleReport =
  | Readonly<{ type: 'MODULE_READY'; module: string; provided: readonly string[] }>
  | Readonly<{ type: 'MODULE_FAILED'; module: string; error: string; code?: string }>
  | Readonly<{ type: 'MODULE_STOPPED'; module: string; error?: string }>;

/** What the kernel sends to a module actor. */
export type ModuleCommand = Readonly<{ type: 'STOP' }>;

export type KernelCommand = ModuleReport | Readonly<{ type: 'STOP'; reason: string }>;

/** Facts the kernel emits; the runtime appends each to the `kernel` stream. */
export type KernelFact = EventNamed<'ModuleStarted' | 'ModuleFailed' | 'ModuleStopped' | 'KernelStopped'>;

export type KernelInput = Readonly<{ modules: readonly ModuleDeclaration[]; layers: ModuleLayers; given: readonly string[] }>;

export type KernelContext = {
  modules: readonly ModuleDeclaration[];
  layers: ModuleLayers;
  layerIndex: number;
  booting: string[];
  spawned: string[];
  provided: string[];
  stopQueue: string[];
  failure: { module: string; error: string } | null;
  stopReason: string | null;
};

export type KernelOutput = Readonly<{ failure: KernelContext['failure']; reason: string }>;

const layerOf = (context: KernelContext, module: string) => context.layers.findIndex((layer) => layer.includes(module));
const declarationOf = (context: KernelContext, module: string) => context.modules.find((m) => m.name === module)!;
const missingForLayer = (context: KernelContext): string[] =>
  (context.layers[context.layerIndex] ?? []).flatMap((name) =>
    declarationOf(context, name)
      .requires.filter((f) => !context.provided.includes(f))
      .map((f) => `${name} needs '${f}'`),
  );

export const kernelMachine = setup({
  types: {
    context: {} as KernelContext,
    events: {} as KernelCommand,
    input: {} as KernelInput,
    emitted: {} as KernelFact,
    output: {} as KernelOutput,
  },
  actors: {
    module: fromCallback<ModuleCommand, ModuleInput>(({ input, sendBack }) => {
      sendBack({ type: 'MODULE_FAILED', module: input.name, error: 'no module logic was provided to the kernel' });
    }),
  },
  guards: {
    layerUnsatisfied: ({ context }) => missingForLayer(context).length > 0,
    layerDone: ({ context, event }) => event.type === 'MODULE_READY' && context.booting.length === 1 && context.booting[0] === event.module,
    moreLayers: ({ context }) => context.layerIndex + 1 < context.layers.length,
    nothingToStop: ({ context }) => context.stopQueue.length === 0,
    lastToStop: ({ context, event }) =>
      event.type === 'MODULE_STOPPED' && context.stopQueue.length === 1 && context.stopQueue[0] === event.module,
  },
  actions: {
    spawnLayer: enqueueActions(({ context, enqueue }) => {
      const layer = context.layers[context.layerIndex] ?? [];
      enqueue.assign({ booting: [...layer], spawned: [...context.spawned, ...layer] });
      for (const name of layer) {
        enqueue.spawnChild('module', { id: name, systemId: `module:${name}`, input: { name, layer: context.layerIndex } });
      }
    }),
    recordUnsatisfied: assign(({ context }) => ({
      failure: {
        module: (context.layers[context.layerIndex] ?? []).join(', '),
        error: `facilities not produced before layer ${context.layerIndex}: ${missingForLayer(context).join('; ')}`,
      },
    })),
    recordReady: enqueueActions(({ context, event, enqueue }) => {
      if (event.type !== 'MODULE_READY') return;
      enqueue.assign({
        booting: context.booting.filter((m) => m !== event.module),
        provided: [...context.provided, ...event.provided],
      });
      enqueue.emit({
        type: 'ModuleStarted',
        data: { module: event.module, layer: layerOf(context, event.module), provides: [...declarationOf(context, event.module).provides] },
      });
    }),
    recordFailure: enqueueActions(({ context, event, enqueue }) => {
      if (event.type !== 'MODULE_FAILED') return;
      if (!context.failure) enqueue.assign({ failure: { module: event.module, error: event.error } });
      enqueue.emit({
        type: 'ModuleFailed',
        data: {
          module: event.module,
          layer: layerOf(context, event.module),
          error: event.error,
          ...(event.code ? { code: event.code } : {}),
        },
      });
    }),
    recordStopRequest: assign(({ context, event }) => ({
      stopReason: context.stopReason ?? (event.type === 'STOP' && 'reason' in event ? event.reason : 'stop requested'),
    })),
    queueStops: assign(({ context }) => ({ stopQueue: [...context.spawned].reverse() })),
    stopNext: enqueueActions(({ context, enqueue }) => {
      const next = context.stopQueue[0];
      if (next) enqueue.sendTo(next, { type: 'STOP' } satisfies ModuleCommand);
    }),
    recordStopped: enqueueActions(({ context, event, enqueue }) => {
      if (event.type !== 'MODULE_STOPPED') return;
      enqueue.assign({ stopQueue: context.stopQueue.filter((m) => m !== event.module) });
      enqueue.emit({ type: 'ModuleStopped', data: { module: event.module, ...(event.error ? { error: event.error } : {}) } });
    }),
    emitStopped: emit(({ context }) => ({
      type: 'KernelStopped' as const,
      data: {
        reason: context.failure ? `module ${context.failure.module} failed: ${context.failure.error}` : (context.stopReason ?? 'stopped'),
      },
    })),
  },
}).createMachine({
  id: 'kernel',
  context: ({ input }) => ({
    modules: input.modules,
    layers: input.layers,
    layerIndex: 0,
    booting: [],
    spawned: [],
    provided: [...input.given],
    stopQueue: [],
    failure: null,
    stopReason: null,
  }),
  initial: 'checkingLayer',
  states: {
    checkingLayer: {
      always: [{ guard: 'layerUnsatisfied', target: 'stopping', actions: 'recordUnsatisfied' }, { target: 'startingLayer' }],
    },
    startingLayer: {
      entry: 'spawnLayer',
      on: {
        MODULE_READY: [
          {
            guard: and(['layerDone', 'moreLayers']),
            target: 'checkingLayer',
            actions: ['recordReady', assign({ layerIndex: ({ context }) => context.layerIndex + 1 })],
          },
          { guard: 'layerDone', target: 'running', actions: 'recordReady' },
          { actions: 'recordReady' },
        ],
        MODULE_FAILED: { target: 'stopping', actions: 'recordFailure' },
        STOP: { target: 'stopping', actions: 'recordStopRequest' },
      },
    },
    running: {
      on: {
        MODULE_FAILED: { target: 'stopping', actions: 'recordFailure' },
        STOP: { target: 'stopping', actions: 'recordStopRequest' },
      },
    },
    stopping: {
      entry: ['queueStops', 'stopNext'],
      always: { guard: 'nothingToStop', target: 'stopped' },
      on: {
        MODULE_STOPPED: [{ guard: 'lastToStop', target: 'stopped', actions: 'recordStopped' }, { actions: ['recordStopped', 'stopNext'] }],
        MODULE_READY: { actions: 'recordReady' },
        MODULE_FAILED: { actions: 'recordFailure' },
      },
    },
    stopped: {
      type: 'final',
      entry: 'emitStopped',
    },
  },
  output: ({ context }) => ({
    failure: context.failure,
    reason: context.failure ? `module ${context.failure.module} failed` : (context.stopReason ?? 'stopped'),
  }),
});
